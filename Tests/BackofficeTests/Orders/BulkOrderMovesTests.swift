import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Orders: bulk accept, ship and deliver, with a dry run")
struct BulkOrderMovesTests {
    /// `count` paid card orders of the shop's first partner, placed through the use case.
    static func paidOrders(_ shop: ShopFixture, count: Int) async throws -> [UUID] {
        try await shop.env.asOwner("UPDATE goods SET stock = 1000")
        var ids: [UUID] = []
        for _ in 0..<count {
            ids.append(
                try await shop.env.database.runStaged(
                    Checkout(
                        shop.request([("BOTTLE", 1, .usd)]), payments: SimulatedPaymentGateway(), idempotencyKey: nil),
                    context: shop.env.context(.appService)
                ).detail.order.id)
        }
        return ids
    }

    static func body(_ move: String, _ ids: [UUID], ship: Bool = false, dryRun: Bool = false) -> String {
        let orders = ids.enumerated().map { index, id in
            ship
                ? #"{"order_id": "\#(id.text)", "carrier": "UPS", "tracking_number": "1Z\#(index)"}"#
                : #"{"order_id": "\#(id.text)"}"#
        }
        return #"{"move": "\#(move)", "dry_run": \#(dryRun), "orders": [\#(orders.joined(separator: ", "))]}"#
    }

    static func outcomes(_ reply: Reply) -> [[String: Any]] { reply.json["outcomes"] as? [[String: Any]] ?? [] }

    @Test(
        """
        a dry run says what each of 20 orders would do and changes nothing; then 20 accepted and shipped in one \
        go, each its own audited move; one without tracking, another shop's order and a repeat refused alone
        """
    )
    func acceptAndShipTwenty() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let ids = try await Self.paidOrders(shop, count: 20)
            let foreign = try await Self.paidOrders(try await ShopFixture.make(env, partner: 1), count: 1)
            let staff = shop.partner.staffToken
            try await env.withApp { client in
                let dry = try await client.call(
                    .post, "/v1/orders/bulk-moves", token: staff, json: Self.body("accept", ids + foreign, dryRun: true)
                )
                #expect(dry.status == 200, "\(dry.text)")
                #expect(dry.json["done"] as? Int == 20 && dry.json["refused"] as? Int == 1)
                let kinds = Self.outcomes(dry).compactMap { $0["outcome"] as? String }
                #expect(kinds == Array(repeating: "would_do", count: 20) + ["refused"], "in the order asked")
                #expect((Self.outcomes(dry).last?["problem"] as? [String: Any])?["code"] as? String == "not_found")
                #expect(try await env.auditCount("orders.accept") == 0, "a dry run changes nothing")

                let accepted = try await client.call(
                    .post, "/v1/orders/bulk-moves", token: staff, json: Self.body("accept", ids + foreign))
                #expect(accepted.json["done"] as? Int == 20, "\(accepted.text)")
                #expect(try await env.auditCount("orders.accept") == 20, "each order its own audited move")
                let foreignStatus = try await env.ownerScalar(
                    "SELECT status FROM orders WHERE id = '\(foreign[0])'", as: String.self)
                #expect(foreignStatus == "paid", "another shop's order untouched")

                var shipping = Self.body("ship", ids, ship: true)
                shipping = shipping.replacingOccurrences(
                    of: #""tracking_number": "1Z0""#, with: #""tracking_number": " ""#)
                let shipped = try await client.call(.post, "/v1/orders/bulk-moves", token: staff, json: shipping)
                #expect(shipped.json["done"] as? Int == 19 && shipped.json["refused"] as? Int == 1, "\(shipped.text)")
                let first = try #require(Self.outcomes(shipped).first)
                #expect((first["problem"] as? [String: Any])?["code"] as? String == "validation_failed")
                #expect((first["problem"] as? [String: Any])?["status"] as? Int == 422)
                #expect(Self.outcomes(shipped).dropFirst().allSatisfy { $0["status"] as? String == "shipped" })
                let captured = try await env.ownerScalar(
                    "SELECT count(*) FROM payments WHERE status = 'captured'", as: Int.self)
                #expect(captured == 19)

                let again = try await client.call(
                    .post, "/v1/orders/bulk-moves", token: staff, json: Self.body("ship", ids, ship: true))
                #expect(again.json["done"] as? Int == 1, "only the order left accepted ships now: \(again.text)")
                let states = Self.outcomes(again).dropFirst().compactMap {
                    ($0["problem"] as? [String: Any])?["current_state"] as? String
                }
                #expect(states == Array(repeating: "shipped", count: 19), "a repeat moves nothing twice")
            }
        }
    }

    @Test("two bulks of the same 20 orders at once: each order accepted once; the bulk's own refusals")
    func twoAtOnceAndRefusals() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let ids = try await Self.paidOrders(shop, count: 20)
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            try await client.call(
                                .post, "/v1/orders/bulk-moves", token: admin, json: Self.body("accept", ids))
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.compactMap { $0.json["done"] as? Int }.reduce(0, +) == 20, "\(replies.map(\.text))")
                #expect(try await env.auditCount("orders.accept") == 20)
                let tooMany = (0..<501).map { _ in UUID() }
                for (body, status) in [
                    (Self.body("accept", tooMany), 422), (Self.body("accept", [ids[0], ids[0]]), 422),
                    (Self.body("cancel", ids), 400), (Self.body("accept", []), 422),
                ] {
                    let refused = try await client.call(.post, "/v1/orders/bulk-moves", token: admin, json: body)
                    #expect(refused.status == status || (status == 422 && refused.status == 400), "\(refused.text)")
                }
                let auditor = env.fixture.tokens[.auditor]!
                #expect(
                    try await client.call(
                        .post, "/v1/orders/bulk-moves", token: auditor, json: Self.body("accept", ids)
                    )
                    .status == 403)
            }
        }
    }
}
