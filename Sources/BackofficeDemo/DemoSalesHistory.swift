import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

extension DemoEnvironment {
    /// Eight weeks of each demo shop's sales before today, so its home's charts have a history: one
    /// to three card orders a day, placed at checkout at that day's time (a clock of its own) and
    /// moved on by the shop's admin as days pass — delivered after a week, some cancelled, some
    /// refunded a few days later — through the real operations. Each shop restocks what it sells
    /// first. Added once (when no order is older than a day), also to a demo database made before.
    static func seedSalesHistoryOnce(database: Database, policies: PolicySet) async throws {
        let now = database.clock.now()
        let (older, customers) = try await survey(database) {
            (
                try await $0.count("SELECT count(*) FROM orders WHERE created_at < \(now.addingTimeInterval(-86_400))"),
                try await $0.ids("SELECT id FROM customers WHERE status = 'active' ORDER BY email LIMIT 20")
            )
        }
        guard older == 0, !customers.isEmpty else { return }
        let context = OperationContext.system("demo-sales", policies: policies)
        for (index, (slug, _)) in partners.enumerated() {
            try await seedSalesHistory(
                shop: slug, seed: index, customers: customers, from: now, database: database, context: context)
        }
    }

    /// The days of history, and what becomes of an order placed `age` days ago (by its number `n`).
    private static let historyDays = 56

    private static func seedSalesHistory(
        shop slug: String, seed: Int, customers: [UUID], from now: Date, database: Database,
        context: OperationContext
    ) async throws {
        let (admin, all) = try await shopAdminAndGoods(slug, database: database)
        // Goods sold for money with 50 or more in stock: those low in stock stay so on the home.
        let goods = all.filter { $0.priceCents != nil && $0.status == .active && $0.stock >= 50 }
        guard let admin, !goods.isEmpty else { return }
        let partner = context.acting(
            as: Principal(operatorID: admin.0, role: .partnerAdmin, tenantID: admin.1, tokenID: nil))
        let start = now.addingTimeInterval(-Double(historyDays) * 86_400)
        func past(_ at: Date) -> Database {
            Database(client: database.client, logger: database.logger, clock: ManualWallClock(at), ids: database.ids)
        }
        for good in goods {
            _ = try await past(start).run(
                UpdateGood(goodID: good.id, changes: GoodChanges(stock: good.stock + 300), ifMatch: "\(good.version)"),
                context: partner)
        }
        let payments = SimulatedPaymentGateway()
        var number = 0
        for age in stride(from: historyDays, to: 0, by: -1) {
            let day = now.addingTimeInterval(-Double(age) * 86_400)
            for order in 0..<(1 + (age * 7 + seed * 3) % 3) {
                number += 1
                let placed = day.addingTimeInterval(Double(order) * 3 * 3_600 - 6 * 3_600)
                let good = goods[(number + seed) % goods.count]
                let quantity = 1 + number % 3
                let id = try await past(placed).runStagedAsSystem(
                    Checkout(
                        CheckoutRequest(
                            customerID: customers[(number * 7 + seed) % customers.count],
                            lines: [
                                .init(
                                    goodID: good.id, quantity: quantity, payIn: .usd,
                                    expectedUnitPrice: good.priceCents)
                            ],
                            shipping: demoShipping, paymentMethod: SimulatedPaymentGateway.approvedCard),
                        payments: payments, idempotencyKey: nil),
                    context: context.acting(as: .system)
                ).detail.order.id
                try await moveOn(
                    id, number: number, age: age, placed: placed, past: past, partner: partner, payments: payments)
            }
        }
    }

    /// Moves a history order on as its shop would have: cancelled (every 13th), accepted the next
    /// day, shipped the day after, delivered after a week, refunded three days after delivery (every
    /// 9th delivered); an order of the last two days is still to accept or to ship.
    private static func moveOn(
        _ id: UUID, number: Int, age: Int, placed: Date, past: (Date) -> Database, partner: OperationContext,
        payments: SimulatedPaymentGateway
    ) async throws {
        func at(_ days: Double) -> Database { past(placed.addingTimeInterval(days * 86_400)) }
        if number % 13 == 0 {
            _ = try await at(0.1).runStaged(
                CancelOrder(orderID: id, reason: "The customer asked to cancel", payments: payments), context: partner)
            return
        }
        guard age > 1 else { return }
        _ = try await at(1).run(AdvanceOrder(orderID: id, move: .accept), context: partner)
        guard age > 2 else { return }
        _ = try await at(2).runStaged(
            ShipOrder(orderID: id, carrier: "UPS", trackingNumber: "1Z\(100_000 + number)", payments: payments),
            context: partner)
        guard age > 7 else { return }
        _ = try await at(7).run(AdvanceOrder(orderID: id, move: .deliver), context: partner)
        guard number % 9 == 0, age > 10 else { return }
        _ = try await at(10).runStaged(
            RefundOrder(orderID: id, reason: "Arrived damaged", payments: payments), context: partner)
    }

    /// The shop's admin (operator and tenant ids) and its goods, by sku.
    static func shopAdminAndGoods(_ slug: String, database: Database) async throws -> (
        (UUID, UUID)?, [Good]
    ) {
        try await database.transaction(for: .system) { connection in
            let admin = try await firstRow(
                "SELECT id, tenant_id FROM operators WHERE email = \("admin@\(slug).example")", on: connection,
                logger: database.logger
            ) { try $0.decode((UUID, UUID).self) }
            var goods: [Good] = []
            for try await row in try await connection.query(
                """
                SELECT \(unescaped: Good.columns) FROM goods WHERE tenant_id = \(admin?.1) ORDER BY sku
                """,
                logger: database.logger)
            {
                goods.append(try Good(row: row))
            }
            return (admin, goods)
        }
    }

    static let demoShipping = Order.Shipping(
        name: "Demo Customer",
        address: ShopAddress(
            line1: "500 Main St", line2: "Apt 4", city: "Springfield", region: "IL", postalCode: "62701",
            country: "US"))
}
