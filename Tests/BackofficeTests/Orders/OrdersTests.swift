import BackofficeAPI
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import Backoffice

/// A shop with goods on sale, a customer with FitPoints, and checkout bodies.
struct ShopFixture {
    let env: TestEnvironment
    let partner: TestEnvironment.Fixture.Partner
    let customer: Customer
    /// sku → good id: BOTTLE (2,500 ¢ or 3,000 points, stock 10), MAT (4,900 ¢ only, stock 5), BAND (800 points only, stock 3).
    let goods: [String: UUID]

    static func make(_ env: TestEnvironment, partner index: Int = 0, points: Int64 = 5_000) async throws -> ShopFixture {
        let partner = env.fixture.partners[index]
        let admin = OperationContext(principal: partner.admin, requestID: "fixture", sourceIP: nil, policies: env.policies)
        var goods: [String: UUID] = [:]
        for (sku, cents, fitpoints, stock) in [("BOTTLE", 2_500, 3_000, 10), ("MAT", 4_900, nil, 5), ("BAND", nil, 800, 3)]
            as [(String, Int64?, Int64?, Int64)]
        {
            let good = try await env.database.run(
                CreateGood(
                    sku: "\(sku)-\(index)",
                    fields: GoodFields(
                        name: sku.capitalized, description: nil, category: "gear", priceCents: cents, priceFitPoints: fitpoints, stock: stock,
                        imageURLs: nil)),
                context: admin)
            _ = try await env.database.run(UpdateGood(goodID: good.id, changes: GoodChanges(status: .active), ifMatch: "1"), context: admin)
            goods[sku] = good.id
        }
        let customer = try await env.customer()
        if points > 0 {
            _ = try await env.database.run(
                AdjustFitPoints(customerID: customer.id, points: points, reason: "welcome"), context: env.context(.backendManager))
        }
        return ShopFixture(env: env, partner: partner, customer: customer, goods: goods)
    }

    /// The unit prices the fixture's goods are created with, by sku and currency.
    static let prices: [String: Int64] = ["BOTTLE usd": 2_500, "BOTTLE fitpoints": 3_000, "MAT usd": 4_900, "BAND fitpoints": 800]

    /// A checkout of `lines` (sku, quantity, currency), each at the price the fixture set (1 where it set none), or at `prices`.
    func checkoutJSON(
        _ lines: [(String, Int, String)], card: String? = SimulatedPaymentGateway.approvedCard, customer: UUID? = nil, prices: [String: Int64] = [:]
    ) -> String {
        let items = lines.map { sku, quantity, currency in
            let price = prices["\(sku) \(currency)"] ?? Self.prices["\(sku) \(currency)"] ?? 1
            let field = currency == "usd" ? "expected_unit_price_cents" : "expected_unit_price_fitpoints"
            return
                #"{"good_id": "\#(goods[sku]!.uuidString.lowercased())", "quantity": \#(quantity), "pay_in": "\#(currency)", "\#(field)": \#(price)}"#
        }
        let payment = card.map { #", "payment_method": "\#($0)""# } ?? ""
        return """
            {"customer_id": "\((customer ?? self.customer.id).uuidString.lowercased())", "lines": [\(items.joined(separator: ", "))],
             "shipping": {"name": "Ada Lovelace", "address": {"line1": "12 Analytical St", "city": "London", "region": "LDN", "postal_code": "N1", "country": "GB"}}\(payment)}
            """
    }

    /// A checkout of `lines` (sku, quantity, currency) at the fixture's prices, paid by an approved card, for `customer`.
    func request(_ lines: [(String, Int, OrderLine.Currency)], customer: UUID? = nil) -> CheckoutRequest {
        CheckoutRequest(
            customerID: customer ?? self.customer.id,
            lines: lines.map { sku, quantity, currency in
                .init(goodID: goods[sku]!, quantity: quantity, payIn: currency, expectedUnitPrice: Self.prices["\(sku) \(currency.rawValue)"])
            },
            shipping: Order.Shipping(
                name: "Buyer", address: ShopAddress(line1: "1 St", line2: nil, city: "Town", region: "TX", postalCode: "1", country: "US")),
            paymentMethod: SimulatedPaymentGateway.approvedCard)
    }

    func stock(_ sku: String) async throws -> Int? {
        try await env.ownerScalar("SELECT stock FROM goods WHERE id = '\(goods[sku]!.uuidString.lowercased())'", as: Int.self)
    }

    func balance() async throws -> Int64? {
        try await env.ownerScalar("SELECT balance FROM fitpoints_accounts WHERE id = '\(customer.id.uuidString.lowercased())'", as: Int64.self)
    }
}

@Suite("Orders: checkout, the partner's moves, what partners may see")
struct OrdersTests {
    @Test("a card order: paid at checkout, accepted, shipped (captured), delivered, refunded; illegal moves are 409 with the current state")
    func cardOrderLifecycle() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let staff = shop.partner.staffToken
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 2, "usd")]), headers: ["Idempotency-Key": "c-1"])
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
                    #expect(!text.contains(shop.customer.id.uuidString.lowercased()) && !text.contains(shop.customer.email))
                }
                let other = env.fixture.partners[1].adminToken
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: other).status == 404)
                #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: other).status == 404)
                #expect((try await client.call(.get, "/v1/orders", token: other).json["items"] as? [Any])?.isEmpty == true)

                let early = try await client.call(.post, "/v1/orders/\(id)/deliver", token: staff)
                #expect(early.status == 409)
                #expect(early["current_state"] == "paid")
                #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: staff)["status"] == "accepted")
                let noTracking = try await client.call(
                    .post, "/v1/orders/\(id)/ship", token: staff, json: #"{"carrier": "UPS", "tracking_number": " "}"#)
                #expect(noTracking.status == 422)
                let shipped = try await client.call(
                    .post, "/v1/orders/\(id)/ship", token: staff, json: #"{"carrier": "UPS", "tracking_number": "1Z999"}"#)
                #expect(shipped["status"] == "shipped")
                #expect((shipped.json["payment"] as? [String: Any])?["captured_cents"] as? Int == 5_000)
                #expect(try await client.call(.post, "/v1/orders/\(id)/cancel", token: staff, json: #"{"reason": "too late"}"#).status == 409)
                #expect(try await client.call(.post, "/v1/orders/\(id)/deliver", token: staff)["status"] == "delivered")
                let refunded = try await client.call(
                    .post, "/v1/orders/\(id)/refund", token: shop.partner.adminToken, json: #"{"reason": "arrived dented"}"#)
                #expect(refunded["status"] == "refunded")
                #expect((refunded.json["payment"] as? [String: Any])?["refunded_cents"] as? Int == 5_000)
                let actions = try await env.ownerScalar(
                    "SELECT string_agg(action, ',' ORDER BY id) FROM audit_events WHERE target_id = '\(id)'", as: String.self)
                #expect(actions == "orders.checkout,orders.checkout,orders.accept,orders.ship,orders.ship,orders.deliver,orders.refund,orders.refund")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE target_id = '\(id)' AND tenant_id <> '\(shop.partner.tenantID.uuidString.lowercased())'",
                        as: Int.self) == 0, "the order's events are on its partner's chain")
            }
        }
    }

    @Test("a split order debits FitPoints through the ledger; cancelling it gives stock and points back and voids the authorization")
    func splitOrderCancelled() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env, points: 2_000)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "usd"), ("BAND", 2, "fitpoints")]),
                    headers: .newIdempotencyKey)
                #expect(placed.status == 201, "\(placed.text)")
                #expect(placed.json["total_fitpoints"] as? Int == 1_600)
                #expect(try await shop.balance() == 400)
                let pointsOnly = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 0, "fitpoints")], card: nil), headers: .newIdempotencyKey)
                #expect(pointsOnly.status == 422, "a quantity of 0")
                #expect(try await shop.stock("BAND") == 1)
                let id = try #require(placed["id"])
                let noReason = try await client.call(.post, "/v1/orders/\(id)/cancel", token: shop.partner.staffToken, json: "{}")
                #expect(noReason.status == 422)
                let cancelled = try await client.call(
                    .post, "/v1/orders/\(id)/cancel", token: shop.partner.staffToken, json: #"{"reason": "out of mats after all"}"#)
                #expect(cancelled["status"] == "cancelled", "\(cancelled.text)")
                #expect((cancelled.json["payment"] as? [String: Any])?["status"] as? String == "voided")
                #expect(try await shop.balance() == 2_000, "the points are back")
                #expect(try await shop.stock("BAND") == 3)
                #expect(try await shop.stock("MAT") == 5)
                let pointsPaid = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BAND", 1, "fitpoints")], card: nil), headers: .newIdempotencyKey)
                #expect(pointsPaid["status"] == "paid", "an order paid in FitPoints alone is paid at once: \(pointsPaid.text)")
                #expect(pointsPaid.json["payment"] == nil)
                #expect(try await shop.balance() == 1_200)
                #expect(try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
                #expect(try await env.ownerScalar("SELECT sum(balance)::int8 FROM fitpoints_balances", as: Int64.self) == 0)
            }
        }
    }

    @Test(
        "a declined card: 402 with its code, the order payment_failed with its stock and FitPoints given back, audited; the same key replays the 402")
    func declinedCheckout() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                for (card, code) in [
                    (SimulatedPaymentGateway.declinedCard, "card_declined"),
                    (SimulatedPaymentGateway.insufficientFundsCard, "insufficient_funds"),
                ] {
                    let key = UUID().uuidString
                    let body = shop.checkoutJSON([("BOTTLE", 1, "usd"), ("BAND", 1, "fitpoints")], card: card)
                    let declined = try await client.call(.post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": key])
                    #expect(declined.status == 402, "\(declined.text)")
                    #expect(declined["code"] == code)
                    #expect(try await shop.stock("BOTTLE") == 10, "stock given back")
                    #expect(try await shop.stock("BAND") == 3)
                    #expect(try await shop.balance() == 5_000, "FitPoints given back")
                    let again = try await client.call(.post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": key])
                    #expect(again.status == 402 && again["code"] == code, "replayed: \(again.text)")
                }
                #expect(
                    try await env.ownerScalar(
                        "SELECT string_agg(DISTINCT o.status || '/' || p.status, ',') FROM orders o JOIN payments p ON p.order_id = o.id",
                        as: String.self)
                        == "payment_failed/failed")
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 2, "one order per key, replays included")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'orders.checkout' AND reason LIKE '%verdict: failed%'", as: Int.self) == 2)
                #expect(try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
            }
        }
    }

    @Test("refused checkouts change nothing: locked customer (409 account_locked), too few points, no stock, no price, no card")
    func refusedCheckouts() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env, points: 100)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let before = try await events()
                let points = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BAND", 1, "fitpoints")]), headers: .newIdempotencyKey)
                #expect(points.status == 409)
                #expect(points["code"] == "insufficient_fitpoints")
                let affordable = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BAND", 1, "fitpoints")], card: nil), headers: .newIdempotencyKey)
                #expect(affordable.status == 409, "100 points do not buy an 800-point band either")
                let stock = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 6, "usd")]), headers: .newIdempotencyKey)
                #expect(stock["code"] == "out_of_stock")
                let noPrice = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "fitpoints")]), headers: .newIdempotencyKey)
                #expect(noPrice.status == 422)
                let noCard = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "usd")], card: nil), headers: .newIdempotencyKey)
                #expect(noCard.status == 422)
                #expect(noCard.text.contains("payment_method"))
                _ = try await env.database.run(
                    LockAccount(customerID: shop.customer.id, reason: "fraud review"), context: env.context(.backendManager))
                let locked = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]), headers: .newIdempotencyKey)
                #expect(locked.status == 409)
                #expect(locked["code"] == "account_locked")
                #expect(try await events() == before + 1, "only the lock was audited")
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 0)
                #expect(try await shop.stock("BOTTLE") == 10)
                #expect(try await shop.stock("MAT") == 5)
                #expect(try await shop.balance() == 100)
                // A partner's token cannot place orders.
                #expect(
                    try await client.call(
                        .post, "/v1/checkout", token: shop.partner.adminToken, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                        headers: .newIdempotencyKey
                    )
                    .status == 403)
            }
        }
    }

    @Test("20 concurrent checkouts for the last 5 units: exactly 5 orders, stock 0, never negative")
    func concurrentCheckouts() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            var customers: [UUID] = []
            for _ in 0..<20 { customers.append(try await env.customer().id) }
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for customer in customers {
                    group.addTask {
                        let request = shop.request([("MAT", 1, .usd)], customer: customer)
                        do {
                            _ = try await env.database.runStaged(
                                Checkout(request, payments: SimulatedPaymentGateway(), idempotencyKey: nil), context: env.context(.appService))
                            return "placed"
                        } catch let error as DomainError {
                            if case .conflict(let code, _) = error { return code }
                            return "\(error)"
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "placed" }.count == 5)
            #expect(outcomes.filter { $0 == "out_of_stock" }.count == 15, "\(outcomes)")
            #expect(try await shop.stock("MAT") == 0)
            #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 5)
        }
    }

    @Test(
        "an order keeps the number of its lines (line_count) and the database keeps it true: no line added later, no order short of its lines, no service update of the count"
    )
    func lineCountIsKept() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let request = shop.request([("BOTTLE", 1, .usd), ("MAT", 2, .usd)])
            let placed = try await env.database.runStaged(
                Checkout(request, payments: SimulatedPaymentGateway(), idempotencyKey: nil), context: env.context(.appService)
            ).detail
            #expect(placed.order.lineCount == 2)
            let (order, tenant) = (placed.order.id.uuidString.lowercased(), shop.partner.tenantID.uuidString.lowercased())
            let (customer, band) = (shop.customer.id.uuidString.lowercased(), shop.goods["BAND"]!.uuidString.lowercased())
            #expect(try await env.ownerScalar("SELECT line_count FROM orders WHERE id = '\(order)'", as: Int.self) == 2)

            /// The SQLSTATE PostgreSQL refuses `sql` with (run as the tables' owner, past row-level security), nil when it is accepted.
            func refusal(_ sql: String) async -> String? {
                do {
                    try await env.asOwner(sql)
                    return nil
                } catch let error as PSQLError { return error.serverInfo?[.sqlState] } catch { return "\(error)" }
            }
            let lineColumns = "tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price"
            let orderColumns =
                "tenant_id, id, customer_id, status, total_cents, total_fitpoints, shipping_name, shipping_address, line_count, created_at, updated_at"
            let orderValues = "'\(tenant)', gen_random_uuid(), '\(customer)', 'paid', 0, 800, 'B', '{}'::jsonb, 2, now(), now()"
            let thirdLine = "('\(tenant)', '\(order)', 3, '\(band)', 'B', 'Band', 1, 'fitpoints', 800)"
            let addLine = "INSERT INTO order_lines (\(lineColumns)) VALUES \(thirdLine) RETURNING 1"
            #expect(await refusal(addLine) == "23514", "a third line added to a two-line order")
            #expect(
                await refusal(
                    """
                    WITH o AS (INSERT INTO orders (\(orderColumns)) VALUES (\(orderValues)) RETURNING id)
                    INSERT INTO order_lines (\(lineColumns)) SELECT '\(tenant)', o.id, 1, '\(band)', 'B', 'Band', 1, 'fitpoints', 800 FROM o RETURNING 1
                    """) == "23514", "an order of two lines inserted with one")
            #expect(
                await refusal("INSERT INTO orders (\(orderColumns)) VALUES (\(orderValues)) RETURNING 1") == "23514", "an order without its lines")
            #expect(
                await refusal(
                    """
                    WITH o AS (INSERT INTO orders (\(orderColumns)) VALUES (\(orderValues)) RETURNING id)
                    INSERT INTO order_lines (\(lineColumns)) SELECT '\(tenant)', o.id, n, '\(band)', 'B', 'Band', 1, 'fitpoints', 800
                    FROM o, generate_series(1, 2) n RETURNING 1
                    """) == nil, "the same order with both its lines is accepted (the refusals above were for the count)")
            let denied = await env.asService(shop.partner.admin, "UPDATE orders SET line_count = 5 WHERE id = '\(order)'")
            #expect(denied?.status == 403, "the service role may change an order's state, not its line count")
            #expect(try await env.ownerScalar("SELECT line_count FROM orders WHERE id = '\(order)'", as: Int.self) == 2)
            #expect(try await env.ownerScalar("SELECT count(*) FROM order_lines WHERE order_id = '\(order)'", as: Int.self) == 2)
            #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 2)
        }
    }

    @Test("the orders page's hand-written encoder writes exactly the generated encoder's bytes; bad queries fail alike")
    func handEncodedOrdersPage() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let tricky = shop.checkoutJSON([("BOTTLE", 1, "usd")]).replacingOccurrences(of: "Ada Lovelace", with: #"Zoë \"Z\" Ünal / 東京"#)
                .replacingOccurrences(of: #""line1": "12 Analytical St","#, with: #""line1": "12 Analytical St", "line2": "Flat\t2","#)
            try await env.withApp { client in
                var ids: [String] = []
                for body in [tricky, shop.checkoutJSON([("MAT", 1, "usd")]), shop.checkoutJSON([("BAND", 1, "fitpoints")], card: nil)] {
                    let placed = try await client.call(.post, "/v1/checkout", token: app, json: body, headers: .newIdempotencyKey)
                    #expect(placed.status == 201, "\(placed.text)")
                    ids.append(try #require(placed["id"]))
                }
                let staff = shop.partner.staffToken
                _ = try await client.call(.post, "/v1/orders/\(ids[1])/cancel", token: staff, json: #"{"reason": "said \"no\""}"#)
                _ = try await client.call(.post, "/v1/orders/\(ids[2])/accept", token: staff)
                _ = try await client.call(.post, "/v1/orders/\(ids[2])/ship", token: staff, json: #"{"carrier": "DHL", "tracking_number": "JD0001"}"#)
            }
            for (uri, token) in [
                ("/v1/orders", shop.partner.staffToken), ("/v1/orders?limit=2", shop.partner.adminToken),
                ("/v1/orders?status=cancelled", shop.partner.adminToken), ("/v1/orders", env.fixture.tokens[.backendManager]!),
            ] {
                let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
                let reference = try await env.withApp(handEncodedLists: false) { try await $0.call(.get, uri, token: token) }
                #expect(fast.status == 200)
                #expect(fast.text == reference.text, "\(uri)")
                for header in [HTTPField.Name.contentType, .contentLength] {
                    #expect(fast.headers[header] != nil && fast.headers[header] == reference.headers[header], "\(header) of \(uri)")
                }
                if let cursor = fast["next_cursor"] {
                    let next = try await env.withApp { try await $0.call(.get, uri + "&cursor=\(cursor)", token: token) }
                    let nextReference = try await env.withApp(handEncodedLists: false) {
                        try await $0.call(.get, uri + "&cursor=\(cursor)", token: token)
                    }
                    #expect(next.text == nextReference.text)
                }
            }
            for uri in ["/v1/orders?limit=0", "/v1/orders?limit=x", "/v1/orders?status=lost", "/v1/orders?cursor=nope"] {
                let fast = try await env.withApp { try await $0.call(.get, uri, token: shop.partner.staffToken) }
                let reference = try await env.withApp(handEncodedLists: false) { try await $0.call(.get, uri, token: shop.partner.staffToken) }
                #expect(fast.status >= 400 && fast.status < 500 && fast.status == reference.status, "\(uri): \(fast.status) \(reference.status)")
                #expect(fast["code"] == reference["code"], "\(uri)")
            }
        }
    }

    @Test("replaying a checkout with the same Idempotency-Key creates one order and one authorization")
    func checkoutReplay() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let body = shop.checkoutJSON([("BOTTLE", 1, "usd")])
                let first = try await client.call(.post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "cart-42"])
                let again = try await client.call(.post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "cart-42"])
                #expect(first.status == 201 && again.status == 201)
                #expect(first["id"] == again["id"])
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 1)
                #expect(try await env.ownerScalar("SELECT count(*) FROM payments", as: Int.self) == 1)
                #expect(try await shop.stock("BOTTLE") == 9)
                let changed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 2, "usd")]), headers: ["Idempotency-Key": "cart-42"])
                #expect(changed.status == 409)
            }
        }
    }

    @Test("a checkout without Idempotency-Key is 400 naming the header, and changes nothing")
    func checkoutNeedsAKey() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            try await env.withApp { client in
                let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let keyless = try await client.call(
                    .post, "/v1/checkout", token: env.fixture.tokens[.appService]!, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]))
                #expect(keyless.status == 400, "\(keyless.text)")
                #expect(keyless.text.contains("Idempotency-Key"))
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 0)
                #expect(try await shop.stock("BOTTLE") == 10)
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events)
            }
        }
    }

    @Test("a price that changed since the customer saw it is 409 price_changed with the price now, and nothing is reserved")
    func priceChanged() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let stale = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("MAT", 1, "usd"), ("BAND", 1, "fitpoints")], prices: ["MAT usd": 3_900, "BAND fitpoints": 700]),
                    headers: .newIdempotencyKey)
                #expect(stale.status == 409, "\(stale.text)")
                #expect(stale["code"] == "price_changed")
                let problem = try stale.decode(Components.Schemas.Problem.self)
                #expect(problem.errors?.map(\.field) == ["lines[0].expected_unit_price_cents", "lines[1].expected_unit_price_fitpoints"])
                #expect(problem.errors?.map(\.current) == ["4900", "800"])
                #expect(try await shop.stock("MAT") == 5)
                #expect(try await shop.stock("BAND") == 3)
                #expect(try await shop.balance() == 5_000)
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 0)
                let unchanged = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "usd")], prices: ["MAT usd": 4_900]),
                    headers: .newIdempotencyKey)
                #expect(unchanged.status == 201, "at the price now it is placed: \(unchanged.text)")
                let missing = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("MAT", 1, "usd")]).replacingOccurrences(of: #", "expected_unit_price_cents": 4900"#, with: ""),
                    headers: .newIdempotencyKey)
                #expect(missing.status == 422)
                #expect(try missing.decode(Components.Schemas.Problem.self).errors?.map(\.field) == ["lines[0].expected_unit_price_cents"])
            }
        }
    }

    @Test("a checkout and a cancellation change the good's stock and version: an edit sent with the ETag read before is 412 and changes nothing")
    func stockChangesBumpTheVersion() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let admin = shop.partner.adminToken
            let good = shop.goods["BOTTLE"]!.uuidString.lowercased()
            try await env.withApp { client in
                let read = try await client.call(.get, "/v1/goods/\(good)", token: admin)
                let etag = try #require(read.headers[.eTag])
                let placed = try await client.call(
                    .post, "/v1/checkout", token: env.fixture.tokens[.appService]!, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                    headers: .newIdempotencyKey)
                #expect(placed.status == 201)
                let stale = try await client.call(.patch, "/v1/goods/\(good)", token: admin, json: #"{"stock": 50}"#, headers: ["If-Match": etag])
                #expect(stale.status == 412, "\(stale.text)")
                #expect(try await shop.stock("BOTTLE") == 9)
                let order = try #require(placed["id"])
                let now = try #require(try await client.call(.get, "/v1/goods/\(good)", token: admin).headers[.eTag])
                #expect(now != etag)
                #expect(
                    try await client.call(.post, "/v1/orders/\(order)/cancel", token: admin, json: #"{"reason":"customer asked"}"#).status == 200)
                #expect(try await shop.stock("BOTTLE") == 10)
                let afterCancel = try await client.call(
                    .patch, "/v1/goods/\(good)", token: admin, json: #"{"stock": 50}"#, headers: ["If-Match": now])
                #expect(afterCancel.status == 412, "the cancellation put stock back: a new version")
            }
        }
    }
}

@Suite("Payments: signed webhooks, one completion per payment, reconciliation")
struct PaymentWebhookTests {
    func event(_ id: String, _ type: String, _ payment: String) -> String {
        #"{"id": "\#(id)", "type": "\#(type)", "created": 1767225600, "data": {"payment_id": "\#(payment)", "failure_code": "card_declined"}}"#
    }

    func signed(_ body: String, at time: Date, secrets: [String] = [TestEnvironment.webhookSecret]) -> [String: String] {
        ["Webhook-Signature": WebhookSignature.header(body: Array(body.utf8), secrets: secrets, at: time)]
    }

    @Test("a wrong signature or a 10-minute-old timestamp is 400 and changes nothing; a valid event applies once, also delivered twice")
    func webhooksAreVerifiedAndDeduplicated() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 1, "usd")], card: SimulatedPaymentGateway.pendingCard),
                    headers: .newIdempotencyKey)
                #expect(placed["status"] == "pending_payment", "\(placed.text)")
                let id = try #require(placed["id"])
                let paymentID = try #require(
                    try await env.ownerScalar("SELECT provider_payment_id FROM payments WHERE order_id = '\(id)'", as: String.self))
                let body = event("evt_1", "payment.succeeded", paymentID)
                let now = env.clock.now()
                let audit = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let before = try await audit()
                for (what, headers) in [
                    ("no signature", [:]), ("a wrong secret", signed(body, at: now, secrets: ["whsec_someone_else_entirely"])),
                    ("a stale timestamp", signed(body, at: now.addingTimeInterval(-600))),
                    ("an altered body", signed(body.replacingOccurrences(of: "evt_1", with: "evt_X"), at: now)),
                ] {
                    let reply = try await client.call(.post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: headers)
                    #expect(reply.status == 400, "\(what): \(reply.status) \(reply.text)")
                    #expect(reply["code"] == "invalid_signature", "\(what)")
                }
                #expect(try await audit() == before)
                #expect(try await env.ownerScalar("SELECT count(*) FROM payment_webhook_events", as: Int.self) == 0)
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: app)["status"] == "pending_payment")

                // A rotation: two signatures, one under the current secret.
                let rotation = signed(body, at: now, secrets: ["whsec_retired_secret_00000", TestEnvironment.webhookSecret])
                let applied = try await client.call(.post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: rotation)
                #expect(applied.status == 200, "\(applied.text)")
                #expect(applied["outcome"] == "completed")
                let duplicate = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: signed(body, at: now))
                #expect(duplicate.json["duplicate"] as? Bool == true)
                let second = event("evt_2", "payment.succeeded", paymentID)
                let racing = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: second, headers: signed(second, at: now))
                #expect(racing["outcome"] == "already_applied", "a second completion of the same payment changes nothing")
                let order = try await client.call(.get, "/v1/orders/\(id)", token: app)
                #expect(order["status"] == "paid")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'orders.checkout' OR action = 'payments.webhook'", as: Int.self) == 4,
                    "the reservation, the provider's pending verdict, the webhook's completion")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE target_id = '\(id)' AND action = 'payments.webhook'", as: Int.self) == 2)
                #expect(try await env.ownerScalar("SELECT authorized_cents FROM payments WHERE order_id = '\(id)'", as: Int64.self) == 2_500)
            }
        }
    }

    @Test(
        "a partial refund at the provider is recorded on the payment and leaves the order; the refund of the rest refunds it and returns its FitPoints"
    )
    func partialRefunds() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 1, "usd"), ("BAND", 1, "fitpoints")]),
                    headers: .newIdempotencyKey)
                let id = try #require(placed["id"])
                #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: admin).status == 200)
                #expect(
                    try await client.call(
                        .post, "/v1/orders/\(id)/ship", token: admin, json: #"{"carrier":"UPS","tracking_number":"1Z1"}"#
                    ).status == 200)
                #expect(try await shop.balance() == 4_200)
                let paymentID = try #require(
                    try await env.ownerScalar("SELECT provider_payment_id FROM payments WHERE order_id = '\(id)'", as: String.self))
                func refund(_ eventID: String, amount: Int?) async throws -> Reply {
                    let data = #""payment_id": "\#(paymentID)""# + (amount.map { #", "amount_cents": \#($0)"# } ?? "")
                    let body = #"{"id": "\#(eventID)", "type": "refund.succeeded", "data": {\#(data)}}"#
                    return try await client.call(
                        .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: signed(body, at: env.clock.now()))
                }
                let partial = try await refund("evt_r1", amount: 1_000)
                #expect(partial["outcome"] == "partially_refunded", "\(partial.text)")
                let payment = {
                    try await env.ownerScalar("SELECT status || ' ' || refunded_cents FROM payments WHERE order_id = '\(id)'", as: String.self)
                }
                #expect(try await payment() == "captured 1000")
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: app)["status"] == "shipped")
                #expect(try await shop.balance() == 4_200, "no FitPoints back for part of the dollars")
                let rest = try await refund("evt_r2", amount: nil)
                #expect(rest["outcome"] == "refunded")
                #expect(try await payment() == "refunded 2500")
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: app)["status"] == "refunded")
                #expect(try await shop.balance() == 5_000, "the whole refund returns the order's FitPoints")
                #expect(try await refund("evt_r3", amount: 500)["outcome"] == "already_applied", "never more than was captured")
                #expect(try await payment() == "refunded 2500")
            }
        }
    }

    @Test("a failed payment cancels its order (stock back); a payment whose webhook never came is completed by reconciliation")
    func failedPaymentsAndReconciliation() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                var orders: [String] = []
                for _ in 0..<2 {
                    let placed = try await client.call(
                        .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 2, "usd")], card: SimulatedPaymentGateway.pendingCard),
                        headers: .newIdempotencyKey)
                    orders.append(try #require(placed["id"]))
                }
                #expect(try await shop.stock("MAT") == 1)
                let failing = try #require(
                    try await env.ownerScalar("SELECT provider_payment_id FROM payments WHERE order_id = '\(orders[0])'", as: String.self))
                let body = event("evt_fail", "payment.failed", failing)
                let reply = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: signed(body, at: env.clock.now()))
                #expect(reply["outcome"] == "payment_failed", "\(reply.text)")
                #expect(try await client.call(.get, "/v1/orders/\(orders[0])", token: app)["status"] == "payment_failed")
                #expect(try await shop.stock("MAT") == 3)

                env.clock.advance(by: 15 * 60)
                let report = try await client.call(.post, "/v1/payments/reconciliations", token: manager, json: "{}")
                #expect(report.status == 200, "\(report.text)")
                #expect(report.json["completed"] as? [String] == [orders[1]])
                #expect(try await client.call(.get, "/v1/orders/\(orders[1])", token: app)["status"] == "paid")
                let again = try await client.call(.post, "/v1/payments/reconciliations", token: manager, json: "{}")
                #expect(again.json["checked"] as? Int == 0, "nothing is pending any more")
                #expect(try await client.call(.post, "/v1/payments/reconciliations", token: shop.partner.adminToken, json: "{}").status == 403)
            }
        }
    }

    @Test("a forged webhook is refused before any database work (400 while the pool's only connection is busy), counted in /metrics")
    func forgeriesNeverLease() async throws {
        try await TestEnvironment.with { env in
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(1)
            try await Database.with(url: env.appURL, logger: testLogger, clock: env.clock, maximumConnections: 1, limits: limits) { database in
                try await env.withApp(database: database) { client in
                    let (held, holding) = AsyncStream<Void>.makeStream()
                    let (released, release) = AsyncStream<Void>.makeStream()
                    // The pool's one connection opened first (it may take longer than the lease timeout on a busy machine).
                    var warm = false
                    for _ in 0..<10 where !warm {
                        warm = (try? await database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 }) == 1
                    }
                    #expect(warm)
                    let holder = Task {
                        defer { holding.finish() }  // the wait below ends even if the hold never began
                        try await database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in
                            holding.yield()
                            for await _ in released { break }
                        }
                    }
                    var holds = held.makeAsyncIterator()
                    try #require(await holds.next() != nil, "another transaction holds the pool's only connection")
                    let body = event("evt_forged", "payment.succeeded", "pi_whatever")
                    for headers in [signed(body, at: env.clock.now(), secrets: ["whsec_forger_0000000000"]), [:]] {
                        let forged = try await client.call(.post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: headers)
                        #expect(forged.status == 400, "refused without waiting for a connection: \(forged.text)")
                        #expect(forged["code"] == "invalid_signature")
                    }
                    release.yield()
                    try await holder.value
                    let metrics = try await client.call(.get, "/metrics", token: nil)
                    #expect(metrics.text.contains("backoffice_webhook_signature_failures_total"))
                }
            }
        }
    }

    @Test("a signature header with more than five v1 entries is refused even when one of them is right; five are accepted")
    func atMostFiveSignatures() {
        let body = Array(#"{"id":"evt"}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let secret = "whsec_the_right_secret_00"
        let decoys = (1...5).map { "whsec_decoy_secret_\($0)_000" }
        let five = WebhookSignature.header(body: body, secrets: Array(decoys.prefix(4)) + [secret], at: now)
        let six = WebhookSignature.header(body: body, secrets: decoys + [secret], at: now)
        #expect(WebhookSignature.verify(header: five, body: body, secrets: [secret], now: now))
        #expect(!WebhookSignature.verify(header: six, body: body, secrets: [secret], now: now))
        #expect(
            !WebhookSignature.verify(header: five + String(repeating: ",", count: 500), body: body, secrets: [secret], now: now),
            "over 500 characters")
    }

    @Test("refused webhooks are logged once a minute per address, and counted every time")
    func refusalsLoggedOncePerMinute() {
        let clock = ManualInstant()
        let refusals = WebhookRefusals(now: { clock.now })
        let lines = LinesLogged()
        let logger = Logger(label: "test") { _ in lines }
        for _ in 0..<10 { refusals.refused(from: "203.0.113.9", provider: "simulated", logger: logger) }
        refusals.refused(from: "198.51.100.1", provider: "simulated", logger: logger)
        #expect(lines.count == 2, "one line per address")
        clock.advance(.seconds(61))
        refusals.refused(from: "203.0.113.9", provider: "simulated", logger: logger)
        #expect(lines.count == 3, "and again after a minute")
    }

    @Test("signatures: HMAC-SHA256 over t.body, several v1, five minutes' tolerance")
    func signatureRules() {
        let body = Array(#"{"id":"evt"}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let header = WebhookSignature.header(body: body, secrets: ["whsec_a_secret_of_16+"], at: now)
        #expect(WebhookSignature.verify(header: header, body: body, secrets: ["whsec_a_secret_of_16+"], now: now.addingTimeInterval(299)))
        #expect(!WebhookSignature.verify(header: header, body: body, secrets: ["whsec_a_secret_of_16+"], now: now.addingTimeInterval(301)))
        #expect(!WebhookSignature.verify(header: header, body: body + [0x20], secrets: ["whsec_a_secret_of_16+"], now: now))
        #expect(!WebhookSignature.verify(header: header, body: body, secrets: ["whsec_another_secret__"], now: now))
        #expect(!WebhookSignature.verify(header: "t=1767225600", body: body, secrets: ["whsec_a_secret_of_16+"], now: now))
        #expect(!WebhookSignature.verify(header: "garbage", body: body, secrets: ["whsec_a_secret_of_16+"], now: now))
    }
}

/// A log handler that counts the lines written through it.
final class LinesLogged: LogHandler, @unchecked Sendable {  // the count is behind a lock
    private let lines = Mutex(0)
    var count: Int { lines.withLock { $0 } }
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { lines.withLock { $0 += 1 } }
}

@Suite("Provider payment ids")
struct ProviderPaymentIDTests {
    @Test("a provider's payment id names one payment across tenants: the database refuses a second payment with it in another tenant")
    func uniqueAcrossTenants() async throws {
        try await TestEnvironment.with { env in
            let (first, second) = (try await ShopFixture.make(env, partner: 0), try await ShopFixture.make(env, partner: 1))
            let app = env.fixture.tokens[.appService]!
            let orders = try await env.withApp { client in
                var orders: [String] = []
                for shop in [first, second] {
                    let placed = try await client.call(
                        .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]), headers: .newIdempotencyKey)
                    #expect(placed.status == 201, "\(placed.text)")
                    orders.append(try #require(placed["id"]))
                }
                return orders
            }
            let taken = try #require(
                try await env.ownerScalar("SELECT provider_payment_id FROM payments WHERE order_id = '\(orders[0])'", as: String.self))
            await #expect(throws: (any Error).self, "the other tenant's payment cannot take the same provider id") {
                try await env.asOwner("UPDATE payments SET provider_payment_id = '\(taken)' WHERE order_id = '\(orders[1])'")
            }
        }
    }
}
