import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Dual control of erasing a deleted account before its retention period ends (`accounts.erase`
/// in `policies/approvals.yaml`): the account is erased only once a second person approves it.
@Suite("Two-person approval: erasing an account before its retention period ends")
struct AccountErasureApprovalTests {
    func accounts(_ env: TestEnvironment, _ customer: Customer) async throws -> Int {
        try await env.ownerScalar("SELECT count(*) FROM customers WHERE id = '\(customer.id.text)'", as: Int.self)
            ?? -1
    }

    func delete(_ client: any TestClientProtocol, _ token: String, _ customer: Customer) async throws -> Int {
        try await client.call(
            .delete, "/v1/customers/\(customer.id.text)", token: token, json: #"{"reason":"Customer asked"}"#
        ).status
    }

    func erase(_ client: any TestClientProtocol, _ token: String, _ customer: Customer, reason: String? = "Court order")
        async throws -> Reply
    {
        try await client.call(
            .post, "/v1/customers/\(customer.id.text)/erase", token: token,
            json: reason.map { #"{"reason":"\#($0)"}"# } ?? "{}")
    }

    @Test(
        """
        erasing a deleted account is held (202, the account still there); the requester may not approve it; a \
        second manager's approval erases it, audited with the reason and the approver as actor; again it is 404
        """
    )
    func heldThenErased() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let deputy = try await ApprovalTests().secondManager(env, "erasure-deputy")
            let customer = try await env.customer()
            try await env.withApp { client in
                #expect(try await delete(client, manager, customer) == 200)
                let held = try await erase(client, manager, customer)
                #expect(held.status == 202)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(
                    (request.action, request.targetType, request.targetId, request.reason)
                        == ("accounts.erase", "customer", customer.id.text, "Court order"))
                #expect(try await accounts(env, customer) == 1, "nothing erased while held")

                let own = try await ApprovalTests().decide(client, manager, request.id, "approve")
                #expect(own.status == 403 && own["code"] == "own_request")
                #expect(try await accounts(env, customer) == 1)
                let approved = try await ApprovalTests().decide(client, deputy, request.id, "approve")
                #expect(approved.status == 200 && approved["status"] == "approved")
                #expect(try await accounts(env, customer) == 0, "erased once approved")
                let audited = try await env.ownerScalar(
                    """
                    SELECT e.reason || '|' || (e.actor_id = r.decided_by)::text FROM audit_events e, approval_requests r
                    WHERE e.action = 'accounts.erase' AND e.target_id = '\(customer.id.text)' AND r.id = '\(request.id)'
                    """, as: String.self)
                #expect(audited == "Court order|true", "the reason, the approver its actor")
                #expect(try await client.call(.get, "/v1/customers/\(customer.id.text)", token: manager).status == 404)
                #expect(try await erase(client, manager, customer).status == 404, "erased already")
            }
        }
    }

    @Test(
        """
        an account that is not deleted is 409 and a missing reason 422, nothing held; an account restored while \
        its erasure waited is not erased by the approval (409), and the request stays pending
        """
    )
    func refusedUpFrontAndRestoredMeanwhile() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let admin = env.fixture.tokens[.platformAdmin]!
            let active = try await env.customer()
            let customer = try await env.customer()
            try await env.withApp { client in
                let live = try await erase(client, manager, active)
                #expect(live.status == 409 && live["code"] == "invalid_transition")
                #expect(try await delete(client, manager, customer) == 200)
                #expect(try await erase(client, manager, customer, reason: nil).status == 422)
                #expect(try await erase(client, manager, customer, reason: " ").status == 422)
                #expect(try await env.ownerScalar("SELECT count(*) FROM approval_requests", as: Int.self) == 0)

                let held = try await erase(client, manager, customer)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                let restored = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/restore", token: manager, json: #"{"reason":"Mistake"}"#)
                #expect(restored.status == 200)
                let approved = try await ApprovalTests().decide(client, admin, request.id, "approve")
                #expect(approved.status == 409 && approved["code"] == "invalid_transition")
                #expect(try await accounts(env, customer) == 1, "a restored account is not erased")
                let still = try await client.call(.get, "/v1/approvals/\(request.id)", token: manager)
                #expect(still["status"] == "pending")
            }
        }
    }

    @Test("in the console, a deleted account's erasure is held: the page shows it pending; unconfirmed, it is refused")
    func consoleErasureIsHeld() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.withApp { client in
                #expect(try await delete(client, env.fixture.tokens[.backendManager]!, customer) == 200)
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let path = "/console/accounts/\(customer.id.text)"
                let page = try await manager.get(path)
                #expect(page.text.contains("action=\"\(path)/erase\""), "a deleted account offers erasure")
                let unconfirmed = try await manager.post("\(path)/erase", ["reason": "Court order"], csrf: page.csrf)
                #expect(unconfirmed.status == 422 && unconfirmed.text.contains("id=\"confirm_erase-error\""))
                let held = try await manager.post(
                    "\(path)/erase", ["reason": "Court order", "confirm": "yes"], csrf: page.csrf)
                #expect(held.status == 303 && held.location == path)
                #expect(try await accounts(env, customer) == 1)
                let after = try await manager.get(path)
                #expect(
                    after.text.contains("id=\"pending-approvals\"")
                        && after.text.contains("Erase the deleted account \(customer.id.text) now"))
            }
        }
    }

    @Test(
        """
        deleting ends the subscription; one left running (by an earlier version) is not erased (409 \
        subscription_live) nor purged; once it ended, the approved erasure keeps the subscription by id
        """
    )
    func subscribedAccount() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            try await env.withApp { client in
                let subscribed = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/subscriptions", token: env.fixture.tokens[.appService]!,
                    json: SubscribeTests.body(), headers: ["Idempotency-Key": UUID().uuidString])
                #expect(subscribed.status == 201, "\(subscribed.text)")
                #expect(try await delete(client, manager, customer) == 200)
                let running =
                    "UPDATE subscriptions SET status = 'active', ended_at = NULL"
                    + " WHERE customer_id = '\(customer.id.text)' AND status = 'canceled' RETURNING 1"
                #expect(try await env.ownerScalar(running, as: Int.self) == 1, "the deletion ended it; run it again")
                let live = try await erase(client, manager, customer)
                #expect(live.status == 409 && live["code"] == "subscription_live", "\(live.text)")
                env.clock.advance(by: 40 * 86_400)
                let purged = try await env.database.run(
                    PurgeExpiredData(dryRun: false), context: env.context(.platformAdmin))
                #expect(!purged.accounts.contains(customer.id), "kept while its subscription runs")

                _ = try await env.ownerScalar(
                    """
                    UPDATE subscriptions SET status = 'canceled', ended_at = now()
                    WHERE customer_id = '\(customer.id.text)' RETURNING 1
                    """, as: Int.self)
                let held = try await erase(client, manager, customer)
                #expect(held.status == 202, "\(held.text)")
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                let approved = try await ApprovalTests().decide(
                    client, env.fixture.tokens[.platformAdmin]!, request.id, "approve")
                #expect(approved.status == 200, "\(approved.text)")
                #expect(try await accounts(env, customer) == 0)
                let kept = try await env.ownerScalar(
                    "SELECT count(*) FROM subscriptions WHERE customer_id = '\(customer.id.text)'", as: Int.self)
                #expect(kept == 1, "the subscription is kept by id, an accounting record")
            }
        }
    }
}
