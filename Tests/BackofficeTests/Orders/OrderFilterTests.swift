import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("The orders list's filters: placed range, status, SKU, total, customer; never another shop's orders")
struct OrderFilterTests {
    /// Two shops' orders an hour apart: shop A's BOTTLE (2,500 ¢), MAT (4,900 ¢), BOTTLE × 2
    /// (5,000 ¢) by another customer, then shop B's BOTTLE; the times each was placed at.
    static func orders(_ env: TestEnvironment) async throws -> (ids: [UUID], times: [Date], other: UUID) {
        let shopA = try await ShopFixture.make(env)
        let shopB = try await ShopFixture.make(env, partner: 1)
        let other = try await env.customer()
        var (ids, times): ([UUID], [Date]) = ([], [])
        for (shop, lines, customer) in [
            (shopA, ("BOTTLE", 1), nil), (shopA, ("MAT", 1), nil), (shopA, ("BOTTLE", 2), other.id),
            (shopB, ("BOTTLE", 1), nil),
        ] as [(ShopFixture, (String, Int), UUID?)] {
            env.clock.advance(by: 3_600)
            times.append(env.clock.now())
            let request = shop.request([(lines.0, lines.1, .usd)], customer: customer)
            ids.append(
                try await env.database.runStaged(
                    Checkout(request, payments: SimulatedPaymentGateway(), idempotencyKey: nil),
                    context: env.context(.appService)
                ).detail.order.id)
        }
        return (ids, times, other.id)
    }

    static func listed(_ reply: Reply) throws -> [String] {
        try reply.decode(Components.Schemas.OrderPage.self).items.map(\.id)
    }

    @Test(
        """
        a shop's filters, alone and together, through the API's list: placed range (from inclusive, to \
        exclusive), status, SKU, total range; another shop's order with the same good never appears; a SKU of \
        SQL metacharacters or in fullwidth letters matches nothing
        """)
    func shopFilters() async throws {
        try await TestEnvironment.with { env in
            let (ids, times, _) = try await Self.orders(env)
            let (a0, a1, a2) = (ids[0].text, ids[1].text, ids[2].text)
            let admin = env.fixture.partners[0].adminToken
            let at = times.map {
                RFC3339DateTranscoder.format($0).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            }
            try await env.withApp { client in
                func list(_ query: String) async throws -> [String] {
                    let reply = try await client.call(.get, "/v1/orders?\(query)", token: admin)
                    #expect(reply.status == 200, "\(query): \(reply.text)")
                    return try Self.listed(reply)
                }
                #expect(try await list("limit=50") == [a2, a1, a0])
                #expect(try await list("placed_from=\(at[1])") == [a2, a1], "from is inclusive")
                #expect(try await list("placed_to=\(at[1])") == [a0], "to is exclusive")
                #expect(try await list("placed_from=\(at[0])&placed_to=\(at[2])") == [a1, a0])
                #expect(try await list("sku=BOTTLE-0") == [a2, a0])
                #expect(try await list("sku=BOTTLE-1").isEmpty, "another shop's SKU: none of its orders")
                #expect(try await list("total_min_cents=4900") == [a2, a1])
                #expect(try await list("total_min_cents=2500&total_max_cents=4900") == [a1, a0])
                #expect(try await list("status=paid&sku=BOTTLE-0&total_min_cents=5000") == [a2])
                #expect(try await list("status=shipped&sku=BOTTLE-0").isEmpty)
                #expect(try await list("sku=BOTTLE-0&limit=1").count == 1)
                let quote = "'%20OR%201=1%20--"
                #expect(try await list("sku=\(quote)").isEmpty, "SQL metacharacters are data")
                #expect(try await list("sku=%EF%BC%A2OTTLE-0").isEmpty, "a fullwidth letter is another SKU")
                let first = try await client.call(.get, "/v1/orders?sku=BOTTLE-0&limit=1", token: admin)
                let cursor = try #require(try first.decode(Components.Schemas.OrderPage.self).nextCursor)
                #expect(try await list("sku=BOTTLE-0&limit=1&cursor=\(cursor)") == [a0], "pages keep the filter")
                let path = "/v1/orders?status=paid&sku=BOTTLE-0&total_min_cents=2500&placed_from=\(at[0])"
                let fast = try await client.call(.get, path, token: admin)
                let reference = try await env.withApp(handEncodedLists: false) {
                    try await $0.call(.get, path, token: admin)
                }
                #expect(
                    fast.status == 200 && fast.text == reference.text, "the generated handler answers the same bytes")
            }
        }
    }

    @Test(
        """
        a customer filter is a platform role's: the platform admin gets that customer's orders of every shop; a \
        shop's admin naming a customer is 403 customer_filter_forbidden; a range that ends before it starts, a \
        negative total, a 65-character SKU are 422; a malformed time or number is 400
        """)
    func refusals() async throws {
        try await TestEnvironment.with { env in
            let (ids, times, other) = try await Self.orders(env)
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                let platform = try await client.call(
                    .get, "/v1/orders?customer_id=\(other.text)", token: env.fixture.tokens[.platformAdmin]!)
                #expect(try Self.listed(platform) == [ids[2].text], "\(platform.text)")
                let own = try await client.call(.get, "/v1/orders?customer_id=\(other.text)", token: admin)
                #expect(own.status == 403 && own["code"] == "customer_filter_forbidden", "\(own.text)")
                let (late, early) = (RFC3339DateTranscoder.format(times[2]), RFC3339DateTranscoder.format(times[0]))
                let backwards = "placed_from=\(late)&placed_to=\(early)"
                for query in [
                    backwards, "total_min_cents=-1", "total_min_cents=10&total_max_cents=9",
                    "sku=\(String(repeating: "x", count: 65))", "sku=A%00B",
                ] {
                    let reply = try await client.call(.get, "/v1/orders?\(query)", token: admin)
                    #expect(reply.status == 422, "\(query): \(reply.status) \(reply.text)")
                }
                for query in ["placed_from=yesterday", "total_max_cents=ten", "customer_id=nope"] {
                    let reply = try await client.call(
                        .get, "/v1/orders?\(query)", token: env.fixture.tokens[.platformAdmin]!)
                    #expect(reply.status == 400, "\(query): \(reply.status) \(reply.text)")
                }
            }
        }
    }

    @Test(
        """
        the console's board filters as the API does (days in UTC, both included; dollars); its tabs and pages \
        keep the filter; a day that is not one is refused, nothing listed
        """)
    func consoleBoard() async throws {
        try await TestEnvironment.with { env in
            let (ids, times, _) = try await Self.orders(env)
            let day = UTCDay(times[0]).description
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[0].admin.operatorID)
                let board = try await admin.get("/console/orders?status=paid&sku=BOTTLE-0&min_usd=30&from=\(day)")
                #expect(board.status == 200 && board.text.contains(", filtered"), "\(board.status)")
                #expect(board.text.contains("/console/orders/\(ids[2].text)"), "BOTTLE × 2 at $50")
                #expect(!board.text.contains("/console/orders/\(ids[0].text)"), "BOTTLE at $25: under $30")
                #expect(!board.text.contains("/console/orders/\(ids[1].text)"), "MAT: another SKU")
                #expect(board.text.contains("sku=BOTTLE-0"), "the tabs keep the filter")
                #expect(board.text.contains("value=\"BOTTLE-0\""), "the form shows it")
                let refused = try await admin.get("/console/orders?from=yesterday")
                #expect(refused.status == 422 && !refused.text.contains("/console/orders/\(ids[0].text)"))
            }
        }
    }
}
