import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Orders: partial refunds and returns")
struct OrderRefundTests {
    /// An order of `lines` placed by the app, accepted and shipped (its card payment captured); its id.
    static func shipped(
        _ shop: ShopFixture, _ lines: [(String, Int, String)], client: any TestClientProtocol,
        prices: [String: Int64] = [:]
    ) async throws -> String {
        let placed = try await client.call(
            .post, "/v1/checkout", token: shop.env.fixture.tokens[.appService]!,
            json: shop.checkoutJSON(lines, prices: prices),
            headers: .newIdempotencyKey)
        #expect(placed.status == 201, "\(placed.text)")
        let id = try #require(placed["id"])
        let staff = shop.partner.staffToken
        #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: staff).status == 200)
        let shipped = try await client.call(
            .post, "/v1/orders/\(id)/ship", token: staff, json: #"{"carrier": "UPS", "tracking_number": "1Z1"}"#)
        #expect(shipped["status"] == "shipped", "\(shipped.text)")
        return id
    }

    static func refund(
        _ client: any TestClientProtocol, _ order: String, _ body: String, token: String,
        key: String = UUID().uuidString
    ) async throws -> Reply {
        try await client.call(
            .post, "/v1/orders/\(order)/refunds", token: token, json: body, headers: ["Idempotency-Key": key])
    }

    @Test(
        """
        a line returned (cash back, units in stock), a FitPoints line (points back at once), an amount; more than \
        is left is 422; the order shows each refund; the whole refund takes the rest; the sales rollups agree
        """
    )
    func linesAndAmounts() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let id = try await Self.shipped(
                    shop, [("BOTTLE", 2, "usd"), ("BAND", 2, "fitpoints"), ("MAT", 1, "usd")], client: client)
                #expect(try await shop.balance() == 3_400)
                #expect(try await shop.stock("BOTTLE") == 8)

                let key = UUID().uuidString
                let line = #"{"lines": [{"line": 1, "quantity": 1}], "restock": true, "reason": "dented"}"#
                let returned = try await Self.refund(client, id, line, token: admin, key: key)
                #expect(returned.status == 201, "\(returned.text)")
                #expect(returned.json["amount_cents"] as? Int == 2_500 && returned["status"] == "succeeded")
                #expect(try await shop.stock("BOTTLE") == 9, "the returned unit is back in stock")
                let again = try await Self.refund(client, id, line, token: admin, key: key)
                #expect(again["id"] == returned["id"], "the same key answers the same refund")
                #expect(try await shop.stock("BOTTLE") == 9, "and returns nothing twice")

                let points = try await Self.refund(
                    client, id, #"{"lines": [{"line": 2, "quantity": 1}], "reason": "one band too many"}"#,
                    token: admin)
                #expect(points.status == 201 && points.json["fitpoints"] as? Int == 800, "\(points.text)")
                #expect(points.json["amount_cents"] as? Int == 0 && points["status"] == "succeeded")
                #expect(try await shop.balance() == 4_200, "the FitPoints are back in the wallet")
                #expect(try await shop.stock("BAND") == 1, "no return: the band stays out of stock")

                for (body, field) in [
                    (#"{"lines": [{"line": 1, "quantity": 2}], "reason": "r"}"#, "lines"),
                    (#"{"amount_cents": 7401, "reason": "r"}"#, "amount_cents"),
                ] {
                    let refused = try await Self.refund(client, id, body, token: admin)
                    #expect(refused.status == 422 && refused.text.contains("exceeds_refundable"), "\(refused.text)")
                    #expect(refused.text.contains(field))
                }
                for body in [
                    #"{"lines": [{"line": 3, "quantity": 1}], "amount_cents": 5, "reason": "both"}"#,
                    #"{"amount_cents": 5, "reason": "  "}"#, #"{"reason": "neither"}"#,
                    #"{"lines": [{"line": 9, "quantity": 1}], "reason": "no such line"}"#,
                    #"{"lines": [{"line": 3, "quantity": 1}, {"line": 3, "quantity": 1}], "reason": "twice"}"#,
                    #"{"amount_cents": 5, "restock": true, "reason": "a return without lines"}"#,
                ] {
                    let refused = try await Self.refund(client, id, body, token: admin)
                    #expect(refused.status == 422, "\(body): \(refused.text)")
                }
                let other = env.fixture.partners[1].adminToken
                #expect(
                    try await Self.refund(client, id, #"{"amount_cents": 5, "reason": "r"}"#, token: other).status
                        == 404)
                let staff = shop.partner.staffToken
                #expect(
                    try await Self.refund(client, id, #"{"amount_cents": 5, "reason": "r"}"#, token: staff).status
                        == 403)
                let amount = try await Self.refund(
                    client, id, #"{"amount_cents": 400, "reason": "late"}"#, token: admin)
                #expect(amount.status == 201, "\(amount.text)")

                // The customer is told by the app's read of the order.
                let shown = try await client.call(.get, "/v1/orders/\(id)", token: env.fixture.tokens[.appService]!)
                let refunds = try #require(shown.json["refunds"] as? [[String: Any]])
                #expect(refunds.compactMap { $0["amount_cents"] as? Int }.sorted() == [0, 400, 2_500])
                let lines = try #require(shown.json["lines"] as? [[String: Any]])
                #expect(lines.compactMap { $0["refunded_quantity"] as? Int } == [1, 1, 0])
                #expect((shown.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == 2_900)

                let whole = try await client.call(
                    .post, "/v1/orders/\(id)/refund", token: admin, json: #"{"reason": "the rest"}"#)
                #expect(whole["status"] == "refunded", "\(whole.text)")
                #expect((whole.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == 9_900)
                #expect(try await shop.balance() == 5_000, "every FitPoint back, none twice")
                #expect(
                    try await Self.refund(client, id, #"{"amount_cents": 1, "reason": "r"}"#, token: admin).status
                        == 409, "a refunded order is refunded no more")
            }
            let tenant = shop.partner.tenantID.uuidString.lowercased()
            let rollup = try await env.ownerScalar(
                """
                SELECT sum(refunds) || ' ' || sum(refunded_cents) || ' ' || sum(refunded_fitpoints)
                FROM shop_daily_refunds WHERE tenant_id = '\(tenant)'
                """, as: String.self)
            #expect(rollup == "4 9900 1600", "each refund counted once, the whole refund only for what was left")
            let rebuilt = try await env.database.run(
                RebuildShopRollups(tenantID: nil), context: env.context(.platformAdmin))
            #expect(
                rebuilt.differed["orders"] == 0 && rebuilt.differed["refunds"] == 0 && rebuilt.differed["goods"] == 0,
                "the rebuild finds what the triggers kept: \(rebuilt.differed)")
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
            #expect(
                try await env.auditCount("orders.refund") == 7,
                "a reservation and a verdict for each of 2 card refunds, 1 FitPoints refund, the whole refund's 2")
        }
    }

    @Test("30 refunds of one order at once: the cash never exceeds the capture, each unit is returned once")
    func thirtyAtOnce() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let bottles = try await Self.shipped(shop, [("BOTTLE", 10, "usd")], client: client)
                let mats = try await Self.shipped(shop, [("MAT", 5, "usd")], client: client)
                #expect(try await shop.stock("BOTTLE") == 0)
                let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    for index in 0..<60 {
                        group.addTask {
                            let (order, body) =
                                index % 2 == 0
                                ? (bottles, #"{"lines": [{"line": 1, "quantity": 1}], "restock": true, "reason": "r"}"#)
                                : (mats, #"{"amount_cents": 1000, "reason": "r"}"#)
                            return (order, try await Self.refund(client, order, body, token: admin).status)
                        }
                    }
                    return try await group.reduce(into: [String: [Int]]()) { $0[$1.0, default: []].append($1.1) }
                }
                #expect(statuses[bottles]?.filter { $0 == 201 }.count == 10, "\(statuses[bottles] ?? [])")
                #expect(statuses[bottles]?.filter { $0 == 422 }.count == 20)
                #expect(statuses[mats]?.filter { $0 == 201 }.count == 24, "\(statuses[mats] ?? [])")
                #expect(statuses[mats]?.filter { $0 == 422 }.count == 6)
                #expect(try await shop.stock("BOTTLE") == 10, "every unit back once")
                for (order, cents) in [(bottles, 25_000), (mats, 24_000)] {
                    let shown = try await client.call(.get, "/v1/orders/\(order)", token: admin)
                    #expect((shown.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == cents)
                }
            }
            let sum = try await env.ownerScalar(
                "SELECT sum(amount_cents)::int8 FROM order_refunds WHERE status = 'succeeded'", as: Int64.self)
            #expect(sum == 49_000)
        }
    }

    @Test("a refund the provider declines is 409 refund_refused, kept as failed, its units free to refund again")
    func declined() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let admin = shop.partner.adminToken
            let declining = HeldPaymentProvider(holds: [], declines: ["refund"])
            try await env.withApp(payments: declining) { client in
                let id = try await Self.shipped(shop, [("BOTTLE", 1, "usd")], client: client)
                let body = #"{"lines": [{"line": 1, "quantity": 1}], "restock": true, "reason": "r"}"#
                let refused = try await Self.refund(client, id, body, token: admin)
                #expect(refused.status == 409 && refused["code"] == "refund_refused", "\(refused.text)")
                #expect(try await shop.stock("BOTTLE") == 9, "nothing returned")
                let shown = try await client.call(.get, "/v1/orders/\(id)", token: admin)
                let refund = try #require((shown.json["refunds"] as? [[String: Any]])?.first)
                #expect(
                    refund["status"] as? String == "failed" && refund["failure_code"] as? String == "refund_declined")
                #expect((shown.json["lines"] as? [[String: Any]])?.first?["refunded_quantity"] as? Int == 0)
                #expect((shown.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == 0)
            }
        }
    }

    @Test(
        """
        a partial refund left at the provider by a crash blocks the whole refund (409 payment_in_progress) until \
        reconciliation finishes it under its own key: refunded once, its unit back in stock
        """
    )
    func reconciliationFinishesRefunds() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let payments = SimulatedPaymentGateway()
            let order = try await env.withApp(payments: payments) { client in
                try await Self.shipped(shop, [("BOTTLE", 2, "usd")], client: client)
            }
            let partner = OperationContext(
                principal: shop.partner.admin, requestID: "crash", sourceIP: nil, policies: env.policies)
            let refund = RefundOrderPart(
                orderID: try #require(UUID(uuidString: order)),
                request: OrderRefundRequest(
                    lines: [.init(line: 1, quantity: 1)], amountCents: nil, restock: true, reason: "crashed"),
                payments: payments)
            let stage = try await env.database.run(ReserveStage(staged: refund), context: partner)
            guard case .call = stage else { throw TestSetupError(description: "the refund had nothing to call") }
            try await env.withApp(payments: payments) { client in
                let whole = try await client.call(
                    .post, "/v1/orders/\(order)/refund", token: shop.partner.adminToken, json: #"{"reason": "all"}"#)
                #expect(whole.status == 409 && whole["code"] == "payment_in_progress", "\(whole.text)")
                env.clock.advance(by: 11 * 60)
                let report = try await client.call(
                    .post, "/v1/payments/reconciliations", token: env.fixture.tokens[.backendManager]!, json: "{}")
                #expect(report.json["finished_moves"] as? [String] == [order], "\(report.text)")
                let again = try await client.call(
                    .post, "/v1/payments/reconciliations", token: env.fixture.tokens[.backendManager]!, json: "{}")
                #expect((again.json["finished_moves"] as? [String])?.isEmpty == true, "finished once")
                let shown = try await client.call(.get, "/v1/orders/\(order)", token: shop.partner.adminToken)
                #expect((shown.json["refunds"] as? [[String: Any]])?.first?["status"] as? String == "succeeded")
                #expect((shown.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == 2_500)
            }
            #expect(try await shop.stock("BOTTLE") == 9)
        }
    }
}
