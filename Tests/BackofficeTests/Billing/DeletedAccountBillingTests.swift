import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Deleting an account ends its subscription in the deletion's transaction: a deleted account is
/// never charged again (`SubscriptionRecord.endForDeletedAccount`).
@Suite("Deleting an account ends its subscription: never charged again")
struct DeletedAccountBillingTests {
    /// A customer with an active, paid subscription (a returning one: no trial); its id.
    static func subscribed(_ env: TestEnvironment, _ client: any TestClientProtocol) async throws -> (Customer, UUID) {
        let customer = try await SubscribeTests.returningCustomer(env)
        let reply = try await client.call(
            .post, "/v1/customers/\(customer.id.text)/subscriptions", token: env.fixture.tokens[.appService]!,
            json: SubscribeTests.body(), headers: ["Idempotency-Key": UUID().uuidString])
        #expect(reply.status == 201 && reply["status"] == "active", "\(reply.text)")
        return (customer, try #require(reply["id"].flatMap(UUID.init(uuidString:))))
    }

    static func count(_ env: TestEnvironment, _ sql: String) async throws -> Int {
        try await env.ownerScalar(sql, as: Int.self) ?? -1
    }

    @Test(
        """
        30 deletions at once (a reason of 900 characters): one is made, the others are 409; the subscription \
        ended in its transaction (canceled, audited once, no refund); the answer's ETag is the account's \
        version after it; a renewal 40 days on invoices and charges nothing; restoring does not restart it
        """
    )
    func deletionEndsSubscription() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let (customer, subscription) = try await Self.subscribed(env, client)
                let reason = String(repeating: "Customer asked. ", count: 56)  // 896 characters
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await client.call(
                                .delete, "/v1/customers/\(customer.id.text)", token: manager,
                                json: #"{"reason":"\#(reason)"}"#)
                        }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                let statuses = replies.map(\.status)
                #expect(
                    statuses.filter { $0 == 200 }.count == 1,
                    "\(statuses) \(replies.first { $0.status != 409 }?.text ?? "")")
                #expect(statuses.filter { $0 == 409 }.count == 29, "\(statuses)")
                let version = try await env.ownerScalar(
                    "SELECT version FROM customers WHERE id = '\(customer.id.text)'", as: Int64.self)
                let deleted = try #require(replies.first { $0.status == 200 })
                #expect(
                    deleted.headers[.eTag] == EntityTag.of(version ?? -1), "the version after the subscription ended")
                let state = try await env.ownerScalar(
                    "SELECT subscription FROM customers WHERE id = '\(customer.id.text)'", as: String.self)
                #expect(state != "active" && deleted["subscription"] == state, "\(deleted.text)")
                let ended = try await env.ownerScalar(
                    """
                    SELECT status || '|' || cancel_reason || '|' || (ended_at IS NOT NULL)
                    FROM subscriptions WHERE id = '\(subscription.text)'
                    """, as: String.self)
                #expect(ended == "canceled|the account was deleted|true")
                let audited = try await env.ownerScalar(
                    """
                    SELECT string_agg(reason, ';') FROM audit_events
                    WHERE action = 'subscriptions.cancel' AND target_id = '\(subscription.text)'
                    """, as: String.self)
                #expect(audited == "the account was deleted (refund: none)", "audited once")
                #expect(
                    try await Self.count(
                        env,
                        "SELECT count(*) FROM invoice_refunds r JOIN invoices i ON i.id = r.invoice_id "
                            + "WHERE i.subscription_id = '\(subscription.text)'") == 0, "no refund")

                env.clock.advance(by: 40 * 86_400)
                let renewal = try await RenewalTests.renew(env)
                #expect(renewal.invoiced == 0 && renewal.charged == 0, "\(renewal)")
                let restored = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/restore", token: manager,
                    json: #"{"reason":"Deleted by mistake"}"#, headers: ["If-Match": deleted.headers[.eTag] ?? ""])
                #expect(restored.status == 200, "\(restored.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM subscriptions WHERE id = '\(subscription.text)'", as: String.self)
                        == "canceled")
            }
        }
    }

    @Test(
        """
        while a charge of the subscription is under way, the deletion is 409 charge_in_progress and changes \
        nothing: the account active, the subscription live, no event
        """
    )
    func chargeUnderWay() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let (customer, subscription) = try await Self.subscribed(env, client)
                // The next period's invoice, claimed by a renewal run whose charge is under way.
                _ = try await env.ownerScalar(
                    """
                    INSERT INTO invoices (id, subscription_id, customer_id, period_start, period_end, amount_cents,
                        status, provider, provider_key, next_attempt_at, charging, attempts, created_at, updated_at)
                    SELECT gen_random_uuid(), id, customer_id, current_period_end,
                        current_period_end + interval '1 month', 999, 'open', 'simulated',
                        'invoice:' || gen_random_uuid(), now(), true, 1, now(), now()
                    FROM subscriptions WHERE id = '\(subscription.text)' RETURNING 1
                    """, as: Int.self)
                let refused = try await client.call(
                    .delete, "/v1/customers/\(customer.id.text)", token: env.fixture.tokens[.backendManager]!,
                    json: #"{"reason":"Customer asked"}"#)
                #expect(refused.status == 409 && refused["code"] == "charge_in_progress", "\(refused.text)")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT c.status || '|' || s.status FROM customers c JOIN subscriptions s ON s.customer_id = c.id
                        WHERE s.id = '\(subscription.text)'
                        """, as: String.self) == "active|active")
                #expect(
                    try await Self.count(
                        env,
                        "SELECT count(*) FROM audit_events WHERE action IN ('accounts.delete', 'subscriptions.cancel') "
                            + "AND target_id IN ('\(customer.id.text)', '\(subscription.text)')") == 0)
            }
        }
    }

    @Test(
        """
        a subscription made moments ago whose first charge may be under way (incomplete) holds the deletion \
        (409 charge_in_progress); once the first-charge window has passed, the abandoned one ends with it
        """
    )
    func firstChargeUnderWay() async throws {
        try await TestEnvironment.with { env in
            let customer = try await SubscribeTests.returningCustomer(env)
            let subscription = UUID()
            let now = RFC3339DateTranscoder.format(env.clock.now())
            _ = try await env.ownerScalar(
                """
                INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method,
                    created_at, updated_at)
                VALUES ('\(subscription.text)', '\(customer.id.text)', 'monthly', 999, 'month', 'incomplete',
                    'pm_card_visa', '\(now)', '\(now)')
                RETURNING 1
                """, as: Int.self)
            try await env.withApp { client in
                let delete = {
                    try await client.call(
                        .delete, "/v1/customers/\(customer.id.text)", token: env.fixture.tokens[.backendManager]!,
                        json: #"{"reason":"Customer asked"}"#)
                }
                let refused = try await delete()
                #expect(refused.status == 409 && refused["code"] == "charge_in_progress", "\(refused.text)")
                env.clock.advance(by: SubscriptionRecord.firstChargeWindow + 1)
                #expect(try await delete().status == 200)
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM subscriptions WHERE id = '\(subscription.text)'", as: String.self)
                        == "canceled")
            }
        }
    }

    @Test(
        """
        a deleted account's subscription left running (by an earlier version) is ended by the renewal run at \
        its period's end, audited "the account was deleted", never invoiced
        """
    )
    func leftRunning() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let (customer, subscription) = try await Self.subscribed(env, client)
                let deleted = try await client.call(
                    .delete, "/v1/customers/\(customer.id.text)", token: env.fixture.tokens[.backendManager]!,
                    json: #"{"reason":"Customer asked"}"#)
                #expect(deleted.status == 200)
                let running =
                    "UPDATE subscriptions SET status = 'active', ended_at = NULL"
                    + " WHERE id = '\(subscription.text)' RETURNING 1"
                #expect(try await env.ownerScalar(running, as: Int.self) == 1)
                env.clock.advance(by: 40 * 86_400)
                let renewal = try await RenewalTests.renew(env)
                #expect(renewal.ended == 1 && renewal.invoiced == 0 && renewal.charged == 0, "\(renewal)")
                let ended = try await env.ownerScalar(
                    """
                    SELECT s.status || '|' || a.reason FROM subscriptions s JOIN audit_events a
                        ON a.target_id = s.id::text AND a.action = 'subscriptions.renew'
                    WHERE s.id = '\(subscription.text)'
                    """, as: String.self)
                #expect(ended == "canceled|the account was deleted")
            }
        }
    }
}
