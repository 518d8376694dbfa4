import BackofficeAPI
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Orders: checkout, the partner's moves, what partners may see")
struct OrdersTests {
    @Test(
        """
        a card order: paid at checkout, accepted, shipped (captured), delivered, refunded; illegal moves are 409 \
        with the current state
        """
    )
    func cardOrderLifecycle() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let staff = shop.partner.staffToken
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 2, "usd")]),
                    headers: ["Idempotency-Key": "c-1"])
                #expect(placed.status == 201, "\(placed.text)")
                #expect(placed["status"] == "paid")
                #expect(placed.json["total_cents"] as? Int == 5_000)
                #expect((placed.json["payment"] as? [String: Any])?["authorized_cents"] as? Int == 5_000)
                #expect(try await shop.stock("BOTTLE") == 8)
                let id = try #require(placed["id"])

                // The partner sees what it needs to fulfil it, never the customer.
                let shown = try await client.call(.get, "/v1/orders/\(id)", token: staff)
                #expect(shown.status == 200)
                #expect((shown.json["lines"] as? [[String: Any]])?.first?["unit_price"] as? Int == 2_500)
                #expect((shown.json["shipping"] as? [String: Any])?["name"] as? String == "Ada Lovelace")
                for text in [shown.text, try await client.call(.get, "/v1/orders", token: staff).text] {
                    #expect(
                        !text.contains(shop.customer.id.uuidString.lowercased()) && !text.contains(shop.customer.email))
                }
                let other = env.fixture.partners[1].adminToken
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: other).status == 404)
                #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: other).status == 404)
                #expect(
                    (try await client.call(.get, "/v1/orders", token: other).json["items"] as? [Any])?.isEmpty == true)

                let early = try await client.call(.post, "/v1/orders/\(id)/deliver", token: staff)
                #expect(early.status == 409)
                #expect(early["current_state"] == "paid")
                #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: staff)["status"] == "accepted")
                let noTracking = try await client.call(
                    .post, "/v1/orders/\(id)/ship", token: staff, json: #"{"carrier": "UPS", "tracking_number": " "}"#)
                #expect(noTracking.status == 422)
                let shipped = try await client.call(
                    .post, "/v1/orders/\(id)/ship", token: staff,
                    json: #"{"carrier": "UPS", "tracking_number": "1Z999"}"#)
                #expect(shipped["status"] == "shipped")
                #expect((shipped.json["payment"] as? [String: Any])?["captured_cents"] as? Int == 5_000)
                #expect(
                    try await client.call(
                        .post, "/v1/orders/\(id)/cancel", token: staff, json: #"{"reason": "too late"}"#
                    ).status == 409)
                #expect(try await client.call(.post, "/v1/orders/\(id)/deliver", token: staff)["status"] == "delivered")
                let refunded = try await client.call(
                    .post, "/v1/orders/\(id)/refund", token: shop.partner.adminToken,
                    json: #"{"reason": "arrived dented"}"#)
                #expect(refunded["status"] == "refunded")
                #expect((refunded.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == 5_000)
                let actions = try await env.ownerScalar(
                    "SELECT string_agg(action, ',' ORDER BY id) FROM audit_events WHERE target_id = '\(id)'",
                    as: String.self)
                #expect(
                    actions
                        == "orders.checkout,orders.checkout,orders.accept,orders.ship,orders.ship,orders.deliver,"
                        + "orders.refund,orders.refund"
                )
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE target_id = '\(id)' AND tenant_id <> \
                        '\(shop.partner.tenantID.uuidString.lowercased())'
                        """,
                        as: Int.self) == 0, "the order's events are on its partner's chain")
            }
        }
    }

    @Test(
        """
        a split order debits FitPoints through the ledger; cancelling it gives stock and points back and voids \
        the authorization
        """
    )
    func splitOrderCancelled() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env, points: 2_000)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("MAT", 1, "usd"), ("BAND", 2, "fitpoints")]),
                    headers: .newIdempotencyKey)
                #expect(placed.status == 201, "\(placed.text)")
                #expect(placed.json["total_fitpoints"] as? Int == 1_600)
                #expect(try await shop.balance() == 400)
                let pointsOnly = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 0, "fitpoints")], card: nil),
                    headers: .newIdempotencyKey)
                #expect(pointsOnly.status == 422, "a quantity of 0")
                #expect(try await shop.stock("BAND") == 1)
                let id = try #require(placed["id"])
                let noReason = try await client.call(
                    .post, "/v1/orders/\(id)/cancel", token: shop.partner.staffToken, json: "{}")
                #expect(noReason.status == 422)
                let cancelled = try await client.call(
                    .post, "/v1/orders/\(id)/cancel", token: shop.partner.staffToken,
                    json: #"{"reason": "out of mats after all"}"#)
                #expect(cancelled["status"] == "cancelled", "\(cancelled.text)")
                #expect((cancelled.json["payment"] as? [String: Any])?["status"] as? String == "voided")
                #expect(try await shop.balance() == 2_000, "the points are back")
                #expect(try await shop.stock("BAND") == 3)
                #expect(try await shop.stock("MAT") == 5)
                let pointsPaid = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BAND", 1, "fitpoints")], card: nil),
                    headers: .newIdempotencyKey)
                #expect(
                    pointsPaid["status"] == "paid",
                    "an order paid in FitPoints alone is paid at once: \(pointsPaid.text)")
                #expect(pointsPaid.json["payment"] == nil)
                #expect(try await shop.balance() == 1_200)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self)
                        == 0)
                #expect(
                    try await env.ownerScalar("SELECT sum(balance)::int8 FROM fitpoints_balances", as: Int64.self) == 0)
            }
        }
    }

    @Test(
        """
        an order keeps the number of its lines (line_count) and the database keeps it true: no line added later, \
        no order short of its lines, no service update of the count
        """
    )
    func lineCountIsKept() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let request = shop.request([("BOTTLE", 1, .usd), ("MAT", 2, .usd)])
            let placed = try await env.database.runStaged(
                Checkout(request, payments: SimulatedPaymentGateway(), idempotencyKey: nil),
                context: env.context(.appService)
            ).detail
            #expect(placed.order.lineCount == 2)
            let (order, tenant) = (
                placed.order.id.uuidString.lowercased(), shop.partner.tenantID.uuidString.lowercased()
            )
            let (customer, band) = (
                shop.customer.id.uuidString.lowercased(), shop.goods["BAND"]!.uuidString.lowercased()
            )
            #expect(try await env.ownerScalar("SELECT line_count FROM orders WHERE id = '\(order)'", as: Int.self) == 2)

            /// The SQLSTATE PostgreSQL refuses `sql` with (run as the tables' owner, past row-level security), nil when
            /// it is accepted.
            func refusal(_ sql: String) async -> String? {
                do {
                    try await env.asOwner(sql)
                    return nil
                } catch let error as PSQLError { return error.serverInfo?[.sqlState] } catch { return "\(error)" }
            }
            let lineColumns = "tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price"
            let orderColumns =
                """
                tenant_id, id, customer_id, status, total_cents, total_fitpoints, shipping_name, \
                shipping_address, line_count, created_at, updated_at
                """
            let orderValues =
                "'\(tenant)', gen_random_uuid(), '\(customer)', 'paid', 0, 800, 'B', '{}'::jsonb, 2, now(), now()"
            let thirdLine = "('\(tenant)', '\(order)', 3, '\(band)', 'B', 'Band', 1, 'fitpoints', 800)"
            let addLine = "INSERT INTO order_lines (\(lineColumns)) VALUES \(thirdLine) RETURNING 1"
            #expect(await refusal(addLine) == "23514", "a third line added to a two-line order")
            #expect(
                await refusal(
                    """
                    WITH o AS (INSERT INTO orders (\(orderColumns)) VALUES (\(orderValues)) RETURNING id)
                    INSERT INTO order_lines (\(lineColumns)) SELECT '\(tenant)', o.id, 1, '\(band)', 'B', 'Band', 1,
                        'fitpoints', 800 FROM o RETURNING 1
                    """) == "23514", "an order of two lines inserted with one")
            #expect(
                await refusal("INSERT INTO orders (\(orderColumns)) VALUES (\(orderValues)) RETURNING 1") == "23514",
                "an order without its lines")
            #expect(
                await refusal(
                    """
                    WITH o AS (INSERT INTO orders (\(orderColumns)) VALUES (\(orderValues)) RETURNING id)
                    INSERT INTO order_lines (\(lineColumns)) SELECT '\(tenant)', o.id, n, '\(band)', 'B', 'Band', 1,
                        'fitpoints', 800
                    FROM o, generate_series(1, 2) n RETURNING 1
                    """) == nil,
                "the same order with both its lines is accepted (the refusals above were for the count)")
            let denied = await env.asService(
                shop.partner.admin, "UPDATE orders SET line_count = 5 WHERE id = '\(order)'")
            #expect(denied?.status == 403, "the service role may change an order's state, not its line count")
            #expect(try await env.ownerScalar("SELECT line_count FROM orders WHERE id = '\(order)'", as: Int.self) == 2)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM order_lines WHERE order_id = '\(order)'", as: Int.self)
                    == 2)
            #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 2)
        }
    }

    @Test("each order move names its action; only ship, cancel and refund call the provider (staged)")
    func moveActions() {
        #expect(
            OrderMove.allCases.map(\.action.rawValue) == [
                "orders.accept", "orders.ship", "orders.deliver", "orders.cancel", "orders.refund",
            ])
        #expect(OrderMove.allCases.filter(\.callsProvider) == [.ship, .cancel, .refund])
        for move in [OrderMove.accept, .deliver] {
            #expect(AdvanceOrder(orderID: UUID(), move: move).permission == move.action)
        }
        #expect(ShipOrder.action == "orders.ship")
        #expect(CancelOrder.action == "orders.cancel")
        #expect(RefundOrder.action == "orders.refund")
        #expect(ShipOrder.operation == .capture && ShipOrder.refusal == "capture_failed")
        #expect(CancelOrder.operation == .void && CancelOrder.refusal == "void_refused")
        #expect(RefundOrder.operation == .refund && RefundOrder.refusal == "refund_refused")
    }

    @Test("the orders page's hand-written encoder writes exactly the generated encoder's bytes; bad queries fail alike")
    func handEncodedOrdersPage() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let tricky = shop.checkoutJSON([("BOTTLE", 1, "usd")]).replacingOccurrences(
                of: "Ada Lovelace", with: #"Zoë \"Z\" Ünal / 東京"#
            )
            .replacingOccurrences(
                of: #""line1": "12 Analytical St","#, with: #""line1": "12 Analytical St", "line2": "Flat\t2","#)
            try await env.withApp { client in
                var ids: [String] = []
                for body in [
                    tricky, shop.checkoutJSON([("MAT", 1, "usd")]),
                    shop.checkoutJSON([("BAND", 1, "fitpoints")], card: nil),
                ] {
                    let placed = try await client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: .newIdempotencyKey)
                    #expect(placed.status == 201, "\(placed.text)")
                    ids.append(try #require(placed["id"]))
                }
                let staff = shop.partner.staffToken
                _ = try await client.call(
                    .post, "/v1/orders/\(ids[1])/cancel", token: staff, json: #"{"reason": "said \"no\""}"#)
                _ = try await client.call(.post, "/v1/orders/\(ids[2])/accept", token: staff)
                _ = try await client.call(
                    .post, "/v1/orders/\(ids[2])/ship", token: staff,
                    json: #"{"carrier": "DHL", "tracking_number": "JD0001"}"#)
            }
            for (uri, token) in [
                ("/v1/orders", shop.partner.staffToken), ("/v1/orders?limit=2", shop.partner.adminToken),
                ("/v1/orders?status=cancelled", shop.partner.adminToken),
                ("/v1/orders", env.fixture.tokens[.backendManager]!),
            ] {
                let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
                let reference = try await env.withApp(handEncodedLists: false) {
                    try await $0.call(.get, uri, token: token)
                }
                #expect(fast.status == 200)
                #expect(fast.text == reference.text, "\(uri)")
                for header in [HTTPField.Name.contentType, .contentLength] {
                    #expect(
                        fast.headers[header] != nil && fast.headers[header] == reference.headers[header],
                        "\(header) of \(uri)")
                }
                if let cursor = fast["next_cursor"] {
                    let next = try await env.withApp {
                        try await $0.call(.get, uri + "&cursor=\(cursor)", token: token)
                    }
                    let nextReference = try await env.withApp(handEncodedLists: false) {
                        try await $0.call(.get, uri + "&cursor=\(cursor)", token: token)
                    }
                    #expect(next.text == nextReference.text)
                }
            }
            for uri in ["/v1/orders?limit=0", "/v1/orders?limit=x", "/v1/orders?status=lost", "/v1/orders?cursor=nope"]
            {
                let fast = try await env.withApp { try await $0.call(.get, uri, token: shop.partner.staffToken) }
                let reference = try await env.withApp(handEncodedLists: false) {
                    try await $0.call(.get, uri, token: shop.partner.staffToken)
                }
                #expect(
                    fast.status >= 400 && fast.status < 500 && fast.status == reference.status,
                    "\(uri): \(fast.status) \(reference.status)")
                #expect(fast["code"] == reference["code"], "\(uri)")
            }
        }
    }
}
