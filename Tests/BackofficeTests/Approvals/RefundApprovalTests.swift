import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Dual control of large refunds (`orders.refund` past $500 of cash in `policies/approvals.yaml`):
/// the money leaves only once a second admin of the shop, or a platform admin, approves; the
/// provider is asked then.
@Suite("Two-person approval: refunds over $500")
struct RefundApprovalTests {
    /// The shop fixture with a $1,200 bike in stock, and a second admin of the shop's token.
    func shop(_ env: TestEnvironment) async throws -> (ShopFixture, deputy: String) {
        let base = try await ShopFixture.make(env)
        let admin = OperationContext(
            principal: base.partner.admin, requestID: "fixture", sourceIP: nil, policies: env.policies)
        let bike = try await env.database.run(
            CreateGood(
                sku: "BIKE-0",
                fields: GoodFields(
                    name: "Bike", description: nil, category: "gear", priceCents: 120_000, priceFitPoints: nil,
                    stock: 3, imageURLs: nil)),
            context: admin)
        _ = try await env.database.run(
            UpdateGood(goodID: bike.id, changes: GoodChanges(status: .active), ifMatch: "1"), context: admin)
        let system = OperationContext.system("test", policies: env.policies)
        let deputy = try await env.database.runAsSystem(
            CreateOperator(email: "deputy@shop.example", role: .partnerAdmin, tenantID: base.partner.tenantID),
            context: system)
        let token = try await env.database.runAsSystem(
            CreateToken(operatorID: deputy.id, name: "test", expiresInHours: nil), context: system
        ).1.value
        let goods = base.goods.merging(["BIKE": bike.id]) { $1 }
        return (ShopFixture(env: env, partner: base.partner, customer: base.customer, goods: goods), token)
    }

    func refunds(_ env: TestEnvironment, _ order: String) async throws -> Int {
        try await env.ownerScalar("SELECT count(*) FROM order_refunds WHERE order_id = '\(order)'", as: Int.self) ?? -1
    }

    @Test(
        """
        $500 is refunded at once, $600 is held (202, no refund yet); the requester may not approve it; a second \
        admin's approval makes the refund, the provider asked: succeeded, the payment's refunded cents, the approver \
        its actor
        """
    )
    func heldThenRefunded() async throws {
        try await TestEnvironment.with { env in
            let (shop, deputy) = try await shop(env)
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let order = try await OrderRefundTests.shipped(
                    shop, [("BIKE", 1, "usd")], client: client, prices: ["BIKE usd": 120_000])
                let small = try await OrderRefundTests.refund(
                    client, order, #"{"amount_cents": 50000, "reason": "Late"}"#, token: admin, key: "small")
                #expect(small.status == 201 && small["status"] == "succeeded", "at the threshold: at once")
                let again = try await OrderRefundTests.refund(
                    client, order, #"{"amount_cents": 50000, "reason": "Late"}"#, token: admin, key: "small")
                #expect(again.status == 201 && again["id"] == small["id"], "a repeat replays it, not held now")
                let held = try await OrderRefundTests.refund(
                    client, order, #"{"amount_cents": 60000, "reason": "Frame cracked"}"#, token: admin)
                #expect(held.status == 202, "\(held.text)")
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(
                    (request.action, request.amount, request.targetType, request.targetId)
                        == ("orders.refund", 110_000, "order", order), "the order's refunds in all")
                #expect(
                    request.summary == "Refund $600.00 of order \(order), $1,100.00 refunded in all"
                        && request.reason == "Frame cracked")
                #expect(try await refunds(env, order) == 1, "nothing refunded while held")
                let split = try await OrderRefundTests.refund(
                    client, order, #"{"amount_cents": 100, "reason": "Split"}"#, token: admin)
                #expect(split.status == 202, "past $500 in all, a small refund is held too: splitting escapes nothing")

                let own = try await ApprovalTests().decide(client, admin, request.id, "approve")
                #expect(own.status == 403 && own["code"] == "own_request")
                let approved = try await ApprovalTests().decide(client, deputy, request.id, "approve")
                #expect(approved.status == 200 && approved["status"] == "approved", "\(approved.text)")
                let refunded = try await env.ownerScalar(
                    """
                    SELECT r.status || '|' || r.amount_cents || '|' || p.refunded_cents || '|'
                        || (r.requested_by = a.decided_by)::text
                    FROM order_refunds r JOIN payments p ON p.order_id = r.order_id, approval_requests a
                    WHERE r.order_id = '\(order)' AND r.amount_cents = 60000 AND a.id = '\(request.id)'
                    """, as: String.self)
                #expect(refunded == "succeeded|60000|110000|true", "the provider asked once approved")
                let shown = try await ApprovalTests().decide(client, deputy, request.id, "approve")
                #expect(shown.status == 409 && shown["code"] == "approval_decided")
                let events = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'orders.refund' AND target_id = '\(order)'",
                    as: Int.self)
                #expect(events == 4, "each refund's reservation and the provider's verdict on it")
            }
        }
    }

    @Test(
        """
        a refund of lines is held by their price ($1,200 of a bike); a full refund past $500 is 409 \
        approval_required and changes nothing; a direct run past the threshold is refused by the runner's step too
        """
    )
    func linesHeldAndFullRefused() async throws {
        try await TestEnvironment.with { env in
            let (shop, _) = try await shop(env)
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let order = try await OrderRefundTests.shipped(
                    shop, [("BIKE", 1, "usd")], client: client, prices: ["BIKE usd": 120_000])
                let lines = try await OrderRefundTests.refund(
                    client, order, #"{"lines": [{"line": 1, "quantity": 1}], "reason": "Returned"}"#, token: admin)
                #expect(lines.status == 202 && lines.json["amount"] as? Int == 120_000, "\(lines.text)")
                let full = try await client.call(
                    .post, "/v1/orders/\(order)/refund", token: admin, json: #"{"reason":"All of it"}"#,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(full.status == 409 && full["code"] == "approval_required", "\(full.text)")
                #expect(try await refunds(env, order) == 0)
                let status = try await client.call(.get, "/v1/orders/\(order)", token: admin)["status"]
                #expect(status == "shipped")
                let direct = RefundOrderPart(
                    orderID: try #require(UUID(uuidString: order)),
                    request: OrderRefundRequest(lines: nil, amountCents: 70_000, restock: false, reason: "direct"),
                    payments: SimulatedPaymentGateway())
                let context = OperationContext(
                    principal: shop.partner.admin, requestID: "test", sourceIP: nil, policies: env.policies)
                do {
                    _ = try await env.database.runStaged(direct, context: context)
                    Issue.record("a direct refund past the threshold was made")
                } catch DomainError.conflict(let code, _) {
                    #expect(code == "approval_required")
                }
                #expect(try await refunds(env, order) == 0, "the step itself refuses what the policy holds")
            }
        }
    }

    @Test(
        """
        in the console, a $1,200 return is held (the order shows it pending); the second admin approves it in the \
        Approvals queue, and the refund is made then, the unit back in stock
        """
    )
    func consoleHeldThenApproved() async throws {
        try await TestEnvironment.with { env in
            let (shop, _) = try await shop(env)
            try await env.withApp { client in
                let order = try await OrderRefundTests.shipped(
                    shop, [("BIKE", 1, "usd")], client: client, prices: ["BIKE usd": 120_000])
                let admin = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let path = "/console/orders/\(order)"
                let page = try await admin.get(path)
                let form = ["units_1": "1", "restock": "yes", "reason": "Frame cracked", "confirm_refund_part": "yes"]
                let held = try await admin.post("\(path)/refunds", form, csrf: page.csrf)
                #expect(held.status == 303 && held.location == path, "\(held.text)")
                #expect(try await refunds(env, order) == 0)
                let pending = try await admin.get(path)
                #expect(
                    pending.text.contains("id=\"pending-approvals\"")
                        && pending.text.contains("Refund $1,200.00 of order \(order) (a return to stock)"))

                let deputyID = try await env.ownerScalar(
                    "SELECT id::text FROM operators WHERE email = 'deputy@shop.example'", as: String.self)
                let deputy = try await ConsoleClient.signedIn(
                    env, client, as: try #require(deputyID.flatMap { UUID(uuidString: $0) }))
                let queue = try await deputy.get("/console/approvals")
                #expect(
                    queue.text.contains("The change as held") && queue.text.contains("refund_id")
                        && queue.text.contains(order), "the whole change, as it will run, for the approver")
                let request = try #require(
                    try await env.ownerScalar("SELECT id::text FROM approval_requests", as: String.self))
                let approved = try await deputy.post(
                    "/console/approvals/\(request)/approve", ["note": "Checked the photos"], csrf: queue.csrf)
                #expect(approved.status == 303, "\(approved.text)")
                let refunded = try await env.ownerScalar(
                    "SELECT status FROM order_refunds WHERE order_id = '\(order)'", as: String.self)
                #expect(refunded == "succeeded", "the provider asked once approved")
                #expect(try await shop.stock("BIKE") == 3, "the returned bike is back in stock")
            }
        }
    }
}
