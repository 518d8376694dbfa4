import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// Orders written straight into the database (as the owner; the rollups' trigger fires as it
/// does for the service), with the figures a straightforward computation over them expects.
private struct GeneratedOrders {
    struct Line { let good: UUID; let quantity: Int; let paidIn: String; let unitPrice: Int64 }
    struct Generated {
        let tenant: UUID, id: UUID, createdAt: Date, status: Order.Status, updatedAt: Date
        let lines: [Line]
        var totalCents: Int64 {
            lines.filter { $0.paidIn == "usd" }.reduce(0) { $0 + Int64($1.quantity) * $1.unitPrice }
        }
        var totalFitPoints: Int64 {
            lines.filter { $0.paidIn == "fitpoints" }.reduce(0) { $0 + Int64($1.quantity) * $1.unitPrice }
        }
    }

    var orders: [Generated] = []

    /// `count` orders per shop on the days from `first` (UTC), many at a day's first and last
    /// microsecond, in every state; refunds made up to two days after the order.
    init(shops: [(tenant: UUID, goods: [UUID])], first: UTCDay, days: Int, count: Int) {
        var random = SystemRandomNumberGenerator()
        let states: [Order.Status] = [
            .pendingPayment, .paid, .accepted, .shipped, .delivered, .cancelled, .refunded, .paymentFailed,
        ]
        for shop in shops {
            for index in 0..<count {
                let day = first.advanced(by: Int.random(in: 0..<days, using: &random))
                let second: Double =
                    switch index % 3 {
                    case 0: 0  // midnight: this day
                    case 1: 86_400 - 0.000_001  // the last microsecond: still this day
                    default: Double.random(in: 1..<86_399, using: &random).rounded()
                    }
                let created = day.start.addingTimeInterval(second)
                let status = states[index % states.count]
                let refundedAfter = Double(Int.random(in: 0...2, using: &random)) * 86_400 + 3_600
                let lines = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    Line(
                        good: shop.goods.randomElement(using: &random)!,
                        quantity: Int.random(in: 1...4, using: &random),
                        paidIn: Bool.random(using: &random) ? "usd" : "fitpoints",
                        unitPrice: Int64.random(in: 1...9_999, using: &random))
                }
                orders.append(
                    Generated(
                        tenant: shop.tenant, id: UUID(), createdAt: created, status: status,
                        updatedAt: status == .refunded ? created.addingTimeInterval(refundedAfter) : created,
                        lines: lines))
            }
        }
    }

    /// Inserts every order awaiting payment with its lines, then moves those in other states
    /// there (the trigger's insert and update paths), in one transaction.
    var sql: String {
        func text(_ id: UUID) -> String { "'\(id.uuidString.lowercased())'" }
        func time(_ date: Date) -> String { "to_timestamp(\(String(format: "%.6f", date.timeIntervalSince1970)))" }
        let inserts = orders.map { order in
            """
            INSERT INTO orders (tenant_id, id, customer_id, status, total_cents, total_fitpoints, shipping_name,
                shipping_address, carrier, tracking_number, line_count, created_at, updated_at)
            VALUES (\(text(order.tenant)), \(text(order.id)), gen_random_uuid(), 'pending_payment', \(order.totalCents),
                \(order.totalFitPoints), 'Buyer', '{}', 'UPS', 'T1', \(order.lines.count), \(time(order.createdAt)),
                \(time(order.createdAt)));
            INSERT INTO order_lines (tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price)
            VALUES \(order.lines.enumerated().map { index, line in
                "(\(text(order.tenant)), \(text(order.id)), \(index + 1), \(text(line.good)), 'S', 'N', "
                    + "\(line.quantity), "
                    + "'\(line.paidIn)', \(line.unitPrice))"
            }.joined(separator: ", "));
            """
        }
        let moves = orders.filter { $0.status != .pendingPayment }.map { order in
            "UPDATE orders SET status = '\(order.status.rawValue)', updated_at = \(time(order.updatedAt)) "
                + "WHERE id = \(text(order.id));"
        }
        // One command (the owner's call runs one): a block of every statement.
        return "DO $generated$ BEGIN\n" + (inserts + moves).joined(separator: "\n") + "\nEND $generated$"
    }

    /// The sales of each day of `range` for the shops `tenants` names, computed from the orders.
    func sales(_ range: ReportRange, tenants: Set<UUID>) -> [SalesFigures] {
        let sold: Set<Order.Status> = [.paid, .accepted, .shipped, .delivered, .refunded]
        return range.allDays.map { day in
            var figures = SalesFigures(start: day, end: day)
            for order in orders where tenants.contains(order.tenant) {
                if UTCDay(order.createdAt) == day, sold.contains(order.status) {
                    figures.orders += 1
                    figures.grossCents += order.totalCents
                    figures.grossFitPoints += order.totalFitPoints
                }
                if order.status == .refunded, UTCDay(order.updatedAt) == day {
                    figures.refunds += 1
                    figures.refundedCents += order.totalCents
                    figures.refundedFitPoints += order.totalFitPoints
                }
            }
            return figures
        }
    }

    /// The orders placed each day of `range` by state.
    func states(_ range: ReportRange, tenant: UUID) -> [UTCDay: [Order.Status: Int]] {
        var counts: [UTCDay: [Order.Status: Int]] = [:]
        for order in orders
        where order.tenant == tenant && (range.from...range.through).contains(UTCDay(order.createdAt)) {
            counts[UTCDay(order.createdAt), default: [:]][order.status, default: 0] += 1
        }
        return counts
    }

    /// Units and revenue by good over `range`, of orders paid and kept.
    func goods(_ range: ReportRange, tenant: UUID) -> [UUID: (units: Int64, cents: Int64, points: Int64)] {
        let kept: Set<Order.Status> = [.paid, .accepted, .shipped, .delivered]
        var goods: [UUID: (units: Int64, cents: Int64, points: Int64)] = [:]
        for order in orders
        where order.tenant == tenant && kept.contains(order.status)
            && (range.from...range.through).contains(UTCDay(order.createdAt))
        {
            for line in order.lines {
                var figures = goods[line.good] ?? (0, 0, 0)
                figures.units += Int64(line.quantity)
                if line.paidIn == "usd" {
                    figures.cents += Int64(line.quantity) * line.unitPrice
                } else {
                    figures.points += Int64(line.quantity) * line.unitPrice
                }
                goods[line.good] = figures
            }
        }
        return goods
    }
}

@Suite("Reports: a shop's daily figures kept with its orders, read per shop, rebuilt from the orders")
struct ShopFiguresTests {
    private static func generated(_ env: TestEnvironment, first: UTCDay) async throws -> GeneratedOrders {
        var shops: [(tenant: UUID, goods: [UUID])] = []
        for index in 0..<2 {
            let shop = try await ShopFixture.make(env, partner: index, points: 0)
            shops.append((shop.partner.tenantID, Array(shop.goods.values)))
        }
        let orders = GeneratedOrders(shops: shops, first: first, days: 5, count: 120)
        try await env.asOwner(orders.sql)
        return orders
    }

    private static func partner(_ env: TestEnvironment, _ index: Int) -> OperationContext {
        OperationContext(
            principal: env.fixture.partners[index].admin, requestID: "t", sourceIP: nil, policies: env.policies)
    }

    @Test(
        """
        daily sales, orders by state and best sellers equal a computation over generated orders (refunds on \
        their own day, cancelled orders, a day's first and last microsecond), per shop and for the platform
        """
    )
    func aggregatesMatchTheOrders() async throws {
        try await TestEnvironment.with { env in
            let first = UTCDay("2026-03-27")!  // across the day Europe's clocks change: days stay UTC
            let orders = try await Self.generated(env, first: first)
            let range = try ReportRange(from: first.advanced(by: -1), through: first.advanced(by: 7))
            let (alpha, beta) = (env.fixture.partners[0].tenantID, env.fixture.partners[1].tenantID)

            let sales = try await env.database.read(DailySales(range: range), context: Self.partner(env, 0))
            #expect(sales == orders.sales(range, tenants: [alpha]))
            #expect(sales.contains { $0.netCents < 0 } || sales.allSatisfy { $0.refundedCents <= $0.grossCents })
            #expect(sales.map(\.grossCents).reduce(0, +) > 0 && sales.map(\.refunds).reduce(0, +) > 0)
            let platform = try await env.database.read(DailySales(range: range), context: env.context(.backendManager))
            #expect(platform == orders.sales(range, tenants: [alpha, beta]))
            #expect(
                try await env.database.read(DailySales(range: range), context: Self.partner(env, 1))
                    == orders.sales(range, tenants: [beta]))

            let shops = try await env.database.read(SalesByShop(range: range), context: env.context(.backendManager))
            for (tenant, row) in [
                (alpha, shops.first { $0.tenantID == alpha }), (beta, shops.first { $0.tenantID == beta }),
            ] {
                let expected = try #require(orders.sales(range, tenants: [tenant]).total)
                #expect(row?.figures.grossCents == expected.grossCents && row?.figures.netCents == expected.netCents)
                #expect(row?.figures.netFitPoints == expected.netFitPoints && row?.figures.orders == expected.orders)
            }

            let states = try await env.database.read(DailyOrderStates(range: range), context: Self.partner(env, 0))
            #expect(states == orders.states(range, tenant: alpha))

            let best = try await env.database.read(BestSellers(range: range), context: Self.partner(env, 0))
            let expected = orders.goods(range, tenant: alpha)
            #expect(best.count == expected.count)
            for good in best {
                #expect(expected[good.goodID]?.units == good.units, "\(good.sku)")
                #expect(
                    expected[good.goodID]?.cents == good.revenueCents
                        && expected[good.goodID]?.points == good.revenueFitPoints)
                #expect(good.daily.count == range.days && good.daily.reduce(0, +) == good.units)
            }
            #expect(best.map(\.units) == best.map(\.units).sorted(by: >))

            // Weeks and months are the days summed, cut to the range.
            let weeks = sales.grouped(by: .week)
            #expect(weeks.first?.start == range.from && weeks.last?.end == range.through)
            #expect(weeks.map(\.netCents).reduce(0, +) == sales.map(\.netCents).reduce(0, +))
            #expect(weeks.dropFirst().allSatisfy { $0.start == $0.start.monday })
            #expect(sales.grouped(by: .month).map(\.start) == [range.from, UTCDay("2026-04-01")!])
        }
    }

    @Test("UTC days: text and number agree both ways, real dates only, weeks from Monday, months' ends, periods")
    func utcDays() throws {
        for number in stride(from: -300_000, through: 2_900_000, by: 997) {  // years 1148 to 9909: four digits
            let day = UTCDay(number: number)
            #expect(UTCDay(day.description) == day, "\(number)")
        }
        #expect(UTCDay("2024-02-29") != nil && UTCDay("2023-02-29") == nil && UTCDay("2026-13-01") == nil)
        #expect(UTCDay("26-11-01") == nil && UTCDay("2026-1-01") == nil && UTCDay("２０２６-11-01") == nil)
        #expect(UTCDay("1970-01-01")?.number == 0 && UTCDay(Date(timeIntervalSince1970: -1)).number == -1)
        #expect(UTCDay("2026-11-27")!.monday.description == "2026-11-23", "a Friday's week began on Monday")
        #expect(UTCDay("2026-11-23")!.monday.description == "2026-11-23")
        #expect(UTCDay("2024-02-10")!.lastOfMonth.description == "2024-02-29")
        for text in ["0001-01-01", "0099-12-31", "0582-08-21", "0999-02-28", "1000-01-01", "9999-12-31"] {
            #expect(UTCDay(text)?.description == text, "a day writes back as RFC 3339's full-date: \(text)")
        }
        let period = try HomePeriod(period: nil, month: "2026-03", today: UTCDay("2026-11-27")!)
        #expect(
            period.range.days == 31 && period.compared.days == 28 && period.compared.from.description == "2026-02-01")
        let current = try HomePeriod(period: nil, month: "2026-11", today: UTCDay("2026-11-10")!)
        #expect(
            current.range.through.description == "2026-11-10" && current.compared.days == 10, "so far, like for like")
        let week = try HomePeriod(period: "7", month: nil, today: UTCDay("2026-11-27")!)
        #expect(week.range.from.description == "2026-11-21" && week.compared.through.description == "2026-11-20")
        #expect(Change.text(150, against: 100) == "+50.0%" && Change.text(0, against: 0) == "—")
        #expect(Change.text(5, against: 0) == "new" && Change.text(-50, against: 100) == "-150.0%")
    }

    @Test("a shop never sees another's figures: with its filter removed, row-level security shows only its own rows")
    func tenantsNeverMixed() async throws {
        try await TestEnvironment.with { env in
            _ = try await Self.generated(env, first: UTCDay("2026-11-20")!)
            let alpha = env.fixture.partners[0]
            let foreign = try await env.database.transaction(for: alpha.admin) { connection in
                var counts: [Int64] = []
                for table in ["shop_daily_orders", "shop_daily_refunds", "shop_daily_goods"] {
                    let rows = try await connection.query(
                        PostgresQuery(
                            unsafeSQL:
                                "SELECT count(*) FILTER (WHERE tenant_id <> '\(alpha.tenantID)'), count(*) "
                                + "FROM \(table)"
                        ),
                        logger: testLogger)
                    for try await (other, all) in rows.decode((Int64, Int64).self) { counts += [other, all] }
                }
                return counts
            }
            #expect(foreign[0] == 0 && foreign[2] == 0 && foreign[4] == 0, "\(foreign)")
            #expect(foreign[1] > 0 && foreign[5] > 0, "its own rows are there: \(foreign)")
            let total = try await env.ownerScalar(
                "SELECT count(DISTINCT tenant_id) FROM shop_daily_orders", as: Int.self)
            #expect(total == 2)
            // The service may read them, never write them.
            let sum = "SELECT sum(orders)::bigint FROM shop_daily_orders"
            let before = try await env.ownerScalar(sum, as: Int64.self)
            let write = await env.asService(alpha.admin, "UPDATE shop_daily_orders SET orders = 0")
            #expect(write != nil, "the service holds no write privilege on the rollups")
            #expect(try await env.ownerScalar(sum, as: Int64.self) == before)
        }
    }

    @Test("the rebuild recomputes the figures from the orders, says how many rows were wrong, and is audited")
    func rebuild() async throws {
        try await TestEnvironment.with { env in
            let orders = try await Self.generated(env, first: UTCDay("2026-11-20")!)
            let admin = env.context(.platformAdmin)
            let clean = try await env.database.run(RebuildShopRollups(tenantID: nil), context: admin)
            #expect(
                clean.differed == ["orders": 0, "refunds": 0, "goods": 0, "audit": 0, "customers": 0, "fitpoints": 0])

            try await env.asOwner(
                """
                DO $corrupt$ BEGIN
                UPDATE shop_daily_orders SET total_cents = total_cents + 1 WHERE (tenant_id, day, status) IN
                    (SELECT tenant_id, day, status FROM shop_daily_orders WHERE status = 'paid' LIMIT 1);
                DELETE FROM shop_daily_refunds WHERE (tenant_id, day) IN
                    (SELECT tenant_id, day FROM shop_daily_refunds LIMIT 1);
                END $corrupt$
                """)
            let alpha = env.fixture.partners[0].tenantID
            let mended = try await env.database.run(RebuildShopRollups(tenantID: nil), context: admin)
            #expect(mended.differed["orders"] == 1 && mended.differed["refunds"] == 1, "\(mended)")
            let range = try ReportRange(from: UTCDay("2026-11-19")!, through: UTCDay("2026-11-28")!)
            #expect(
                try await env.database.read(DailySales(range: range), context: Self.partner(env, 0))
                    == orders.sales(range, tenants: [alpha]))
            let audited = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE action = 'reports.rebuild' AND target_id = 'all'", as: Int.self
            )
            #expect(audited == 2)
            await #expect(throws: DomainError.self) {
                _ = try await env.database.run(RebuildShopRollups(tenantID: nil), context: Self.partner(env, 0))
            }
        }
    }

    @Test("an order checked out, shipped, delivered and refunded through the service moves its day's figures")
    func followsTheService() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 2, "usd")]),
                    headers: ["Idempotency-Key": "c-1"])
                let id = try #require(placed["id"])
                let ordered = UTCDay(env.clock.now())
                let staff = shop.partner.staffToken
                _ = try await client.call(.post, "/v1/orders/\(id)/accept", token: staff)
                _ = try await client.call(
                    .post, "/v1/orders/\(id)/ship", token: staff, json: #"{"carrier": "UPS", "tracking_number": "1Z"}"#)
                env.clock.advance(by: 86_400)
                _ = try await client.call(.post, "/v1/orders/\(id)/deliver", token: staff)
                let range = try ReportRange(from: ordered, through: ordered.advanced(by: 1))
                let before = try await env.database.read(BestSellers(range: range), context: Self.partner(env, 0))
                #expect(before.map(\.units) == [2] && before.first?.revenueCents == 5_000)
                let refunded = try await client.call(
                    .post, "/v1/orders/\(id)/refund", token: shop.partner.adminToken, json: #"{"reason": "dented"}"#)
                #expect(refunded["status"] == "refunded")
                let report = try await client.call(
                    .get, "/v1/reports/sales?from=\(ordered)&to=\(ordered.advanced(by: 1))", token: staff)
                #expect(report.status == 200, "\(report.text)")
                let rows = try #require(report.json["rows"] as? [[String: Any]])
                #expect(rows.map { $0["gross_cents"] as? Int } == [5_000, 0])
                #expect(rows.map { $0["refunded_cents"] as? Int } == [0, 5_000], "the refund counts on its own day")
                #expect(rows.map { $0["net_cents"] as? Int } == [5_000, -5_000])
                #expect((report.json["total"] as? [String: Any])?["net_cents"] as? Int == 0)
                #expect(try await env.database.read(BestSellers(range: range), context: Self.partner(env, 0)).isEmpty)

                let csv = try await client.call(
                    .get, "/v1/reports/sales?from=\(ordered)&to=\(ordered.advanced(by: 1))&format=csv", token: staff)
                #expect(csv.text.hasPrefix("start,end,orders,gross_cents,refunds,refunded_cents,net_cents"))
                #expect(csv.text.contains("\(ordered),\(ordered),1,5000,0,0,5000,0,0,0\r\n"))
                let other = try await client.call(
                    .get, "/v1/reports/sales?from=\(ordered)&to=\(ordered)", token: env.fixture.partners[1].adminToken)
                #expect((other.json["total"] as? [String: Any])?["gross_cents"] as? Int == 0, "another shop's sales")
            }
        }
    }

    @Test("a bad range is a 422 naming the field and reads nothing; the customers' service may not read reports")
    func refusals() async throws {
        try await TestEnvironment.with { env in
            let staff = env.fixture.partners[0].staffToken
            try await env.withApp { client in
                for (query, field) in [
                    ("from=2026-02-30", "from"), ("to=26-11-01", "to"), ("from=2026-11-05&to=2026-11-01", "to"),
                    ("from=2020-01-01&to=2026-11-01", "to"),
                ] {
                    let refused = try await client.call(.get, "/v1/reports/sales?\(query)", token: staff)
                    #expect(refused.status == 422, "\(query)")
                    #expect(refused.text.contains("\"\(field)\""), "\(query): \(refused.text)")
                }
                let app = try await client.call(.get, "/v1/reports/sales", token: env.fixture.tokens[.appService]!)
                #expect(app.status == 403)
                let shops = try await client.call(.get, "/v1/reports/shops", token: staff)
                #expect(shops.status == 403)
            }
        }
    }
}
