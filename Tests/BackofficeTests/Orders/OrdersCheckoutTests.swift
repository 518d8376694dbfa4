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

extension OrdersTests {
    @Test(
        """
        a declined card: 402 with its code, the order payment_failed with its stock and FitPoints given back, \
        audited; the same key replays the 402
        """
    )
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
                    let declined = try await client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": key])
                    #expect(declined.status == 402, "\(declined.text)")
                    #expect(declined["code"] == code)
                    #expect(try await shop.stock("BOTTLE") == 10, "stock given back")
                    #expect(try await shop.stock("BAND") == 3)
                    #expect(try await shop.balance() == 5_000, "FitPoints given back")
                    let again = try await client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": key])
                    #expect(again.status == 402 && again["code"] == code, "replayed: \(again.text)")
                }
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT string_agg(DISTINCT o.status || '/' || p.status, ',') FROM orders o JOIN payments \
                        p ON p.order_id = o.id
                        """,
                        as: String.self)
                        == "payment_failed/failed")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 2,
                    "one order per key, replays included")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE action = 'orders.checkout' AND reason LIKE \
                        '%verdict: failed%'
                        """,
                        as: Int.self) == 2)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self)
                        == 0)
            }
        }
    }

    @Test(
        """
        refused checkouts change nothing: locked customer (409 account_locked), too few points, no stock, no \
        price, no card
        """
    )
    func refusedCheckouts() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env, points: 100)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let before = try await events()
                let versions = {
                    try await env.ownerScalar(
                        "SELECT string_agg(sku || ' v' || version, ', ' ORDER BY sku) FROM goods", as: String.self)
                }
                let versionsBefore = try await versions()
                let points = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BAND", 1, "fitpoints")]),
                    headers: .newIdempotencyKey)
                #expect(points.status == 409)
                #expect(points["code"] == "insufficient_fitpoints")
                let affordable = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BAND", 1, "fitpoints")], card: nil),
                    headers: .newIdempotencyKey)
                #expect(affordable.status == 409, "100 points do not buy an 800-point band either")
                let stock = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 6, "usd")]),
                    headers: .newIdempotencyKey)
                #expect(stock["code"] == "out_of_stock")
                let noPrice = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "fitpoints")]),
                    headers: .newIdempotencyKey)
                #expect(noPrice.status == 422)
                let noCard = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "usd")], card: nil),
                    headers: .newIdempotencyKey)
                #expect(noCard.status == 422)
                #expect(noCard.text.contains("payment_method"))
                _ = try await env.database.run(
                    TransitionAccount(customerID: shop.customer.id, move: .lock, reason: "fraud review"),
                    context: env.context(.backendManager))
                let locked = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                    headers: .newIdempotencyKey)
                #expect(locked.status == 409)
                #expect(locked["code"] == "account_locked")
                #expect(try await events() == before + 1, "only the lock was audited")
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 0)
                #expect(try await shop.stock("BOTTLE") == 10)
                #expect(try await shop.stock("MAT") == 5)
                #expect(try await shop.balance() == 100)
                #expect(try await versions() == versionsBefore, "no good's version moved")
                // A partner's token cannot place orders.
                #expect(
                    try await client.call(
                        .post, "/v1/checkout", token: shop.partner.adminToken,
                        json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
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
                                Checkout(request, payments: SimulatedPaymentGateway(), idempotencyKey: nil),
                                context: env.context(.appService))
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

    @Test("replaying a checkout with the same Idempotency-Key creates one order and one authorization")
    func checkoutReplay() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let body = shop.checkoutJSON([("BOTTLE", 1, "usd")])
                let first = try await client.call(
                    .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "cart-42"])
                let again = try await client.call(
                    .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "cart-42"])
                #expect(first.status == 201 && again.status == 201)
                #expect(first["id"] == again["id"])
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 1)
                #expect(try await env.ownerScalar("SELECT count(*) FROM payments", as: Int.self) == 1)
                #expect(try await shop.stock("BOTTLE") == 9)
                let changed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 2, "usd")]),
                    headers: ["Idempotency-Key": "cart-42"])
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
                let version = {
                    try await env.ownerScalar(
                        "SELECT version FROM goods WHERE id = '\(shop.goods["BOTTLE"]!)'", as: Int64.self)
                }
                let versionBefore = try await version()
                let keyless = try await client.call(
                    .post, "/v1/checkout", token: env.fixture.tokens[.appService]!,
                    json: shop.checkoutJSON([("BOTTLE", 1, "usd")]))
                #expect(keyless.status == 400, "\(keyless.text)")
                #expect(keyless.text.contains("Idempotency-Key"))
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 0)
                #expect(try await shop.stock("BOTTLE") == 10)
                #expect(try await version() == versionBefore, "the good's version is unchanged")
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events)
            }
        }
    }

    @Test(
        """
        a price that changed since the customer saw it is 409 price_changed with the price now, and nothing is \
        reserved
        """
    )
    func priceChanged() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let stale = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON(
                        [("MAT", 1, "usd"), ("BAND", 1, "fitpoints")],
                        prices: ["MAT usd": 3_900, "BAND fitpoints": 700]),
                    headers: .newIdempotencyKey)
                #expect(stale.status == 409, "\(stale.text)")
                #expect(stale["code"] == "price_changed")
                let problem = try stale.decode(Components.Schemas.Problem.self)
                #expect(
                    problem.errors?.map(\.field) == [
                        "lines[0].expected_unit_price_cents", "lines[1].expected_unit_price_fitpoints",
                    ])
                #expect(problem.errors?.map(\.current) == ["4900", "800"])
                #expect(try await shop.stock("MAT") == 5)
                #expect(try await shop.stock("BAND") == 3)
                #expect(try await shop.balance() == 5_000)
                #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 0)
                let unchanged = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("MAT", 1, "usd")], prices: ["MAT usd": 4_900]),
                    headers: .newIdempotencyKey)
                #expect(unchanged.status == 201, "at the price now it is placed: \(unchanged.text)")
                let missing = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("MAT", 1, "usd")]).replacingOccurrences(
                        of: #", "expected_unit_price_cents": 4900"#, with: ""),
                    headers: .newIdempotencyKey)
                #expect(missing.status == 422)
                #expect(
                    try missing.decode(Components.Schemas.Problem.self).errors?.map(\.field) == [
                        "lines[0].expected_unit_price_cents"
                    ])
            }
        }
    }

    @Test(
        """
        a checkout and a cancellation change the good's stock and version: an edit sent with the ETag read before \
        is 412 and changes nothing
        """
    )
    func stockChangesBumpTheVersion() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let admin = shop.partner.adminToken
            let good = shop.goods["BOTTLE"]!.uuidString.lowercased()
            try await env.withApp { client in
                let read = try await client.call(.get, "/v1/goods/\(good)", token: admin)
                let etag = try #require(read.headers[.eTag])
                let placed = try await client.call(
                    .post, "/v1/checkout", token: env.fixture.tokens[.appService]!,
                    json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                    headers: .newIdempotencyKey)
                #expect(placed.status == 201)
                let version = {
                    try await env.ownerScalar("SELECT version FROM goods WHERE id = '\(good)'", as: Int64.self)
                }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
                let (versionBefore, eventsBefore) = (try await version(), try await events())
                let stale = try await client.call(
                    .patch, "/v1/goods/\(good)", token: admin, json: #"{"stock": 50}"#, headers: ["If-Match": etag])
                #expect(stale.status == 412, "\(stale.text)")
                #expect(try await shop.stock("BOTTLE") == 9)
                #expect(try await version() == versionBefore, "the refused edit left the good's version")
                #expect(try await events() == eventsBefore, "the refused edit is not audited")
                let order = try #require(placed["id"])
                let now = try #require(try await client.call(.get, "/v1/goods/\(good)", token: admin).headers[.eTag])
                #expect(now != etag)
                #expect(
                    try await client.call(
                        .post, "/v1/orders/\(order)/cancel", token: admin, json: #"{"reason":"customer asked"}"#
                    ).status == 200)
                #expect(try await shop.stock("BOTTLE") == 10)
                let afterCancel = try await client.call(
                    .patch, "/v1/goods/\(good)", token: admin, json: #"{"stock": 50}"#, headers: ["If-Match": now])
                #expect(afterCancel.status == 412, "the cancellation put stock back: a new version")
            }
        }
    }
}
