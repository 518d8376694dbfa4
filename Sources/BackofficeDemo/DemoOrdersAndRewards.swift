import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// The demo's shops, orders and rewards, made through the real operations.
extension DemoEnvironment {
    /// The partners' demo: each partner applied, was checked and approved (its first admin's
    /// token from the approval is revoked: `credentials` issues the demo's), has a staff
    /// member and active goods with stock; one more shop waits for review.
    static func seedShops(database: Database, context: OperationContext) async throws {
        let payments = SimulatedPaymentGateway()
        let public_ = context.acting(as: .anonymous, sourceIP: "127.0.0.1")
        func apply(_ name: String, email: String, taxID: String, city: String) async throws -> ShopApplication {
            try await database.runStaged(
                ApplyForShop(
                    ShopApplicationForm(
                        legalName: name, contactEmail: email, taxID: taxID,
                        address: ShopAddress(
                            line1: "1 Market Street", line2: nil, city: city, region: "CA", postalCode: "94105",
                            country: "US"),
                        bankAccount: BankAccount(
                            holderName: name, routingNumber: "110000000",
                            accountNumber: SimulatedPaymentGateway.verifiedAccount)),
                    payments: payments), context: public_)
        }
        for (index, (slug, name)) in partners.enumerated() {
            let application = try await apply(
                name, email: "admin@\(slug).example", taxID: "94-10000\(index + 10)", city: "San Francisco")
            let approval = try await database.runAsSystem(
                ApproveShopApplication(applicationID: application.id, slug: slug, reason: "demo partner"),
                context: context)
            _ = try await database.runAsSystem(
                CreateOperator(email: "staff@\(slug).example", role: .partnerStaff, tenantID: approval.tenant.id),
                context: context)
            let admin = context.acting(
                as: Principal(
                    operatorID: approval.admin.id, role: .partnerAdmin, tenantID: approval.tenant.id, tokenID: nil))
            for (sku, good, cents, points, stock) in demoGoods[index] {
                let created = try await database.run(
                    CreateGood(
                        sku: sku,
                        fields: GoodFields(
                            name: good, description: nil, category: slug == "green-grocer" ? "snacks" : "supplements",
                            priceCents: cents,
                            priceFitPoints: points, stock: stock,
                            imageURLs: ["https://images.healthtrack.example/\(sku.lowercased()).jpg"])),
                    context: admin)
                _ = try await database.run(
                    UpdateGood(goodID: created.id, changes: GoodChanges(status: .active), ifMatch: "1"), context: admin)
            }
        }
        _ = try await apply(
            "Trail Runner Outfitters", email: "hello@trailrunner.example", taxID: "94-2000001", city: "Oakland")
    }

    /// Orders of each partner in every state, placed at checkout and moved by the partner's admin,
    /// through the real operations: paid, accepted, shipped, delivered, cancelled, refunded, a
    /// split order paid partly in FitPoints, and one waiting for its payment's webhook.
    static func seedOrders(customers: [Customer], database: Database, context: OperationContext) async throws {
        let payments = SimulatedPaymentGateway()
        let app = context.acting(as: .system)
        let shipping = demoShipping
        for (slug, _) in partners {
            let (admin, goods) = try await shopAdminAndGoods(slug, database: database)
            let priced = { (good: Good) in good.priceCents != nil }
            guard let admin, let usd = goods.filter(priced).max(by: { $0.stock < $1.stock }),
                let points = goods.first(where: { $0.priceFitPoints != nil })
            else {
                continue
            }
            let partner = context.acting(
                as: Principal(operatorID: admin.0, role: .partnerAdmin, tenantID: admin.1, tokenID: nil))
            func place(
                _ customer: Customer, _ lines: [CheckoutRequest.Line],
                card: String = SimulatedPaymentGateway.approvedCard
            ) async throws
                -> UUID
            {
                try await database.runStagedAsSystem(
                    Checkout(
                        CheckoutRequest(customerID: customer.id, lines: lines, shipping: shipping, paymentMethod: card),
                        payments: payments,
                        idempotencyKey: nil),
                    context: app
                ).detail.order.id
            }
            let buyers = customers.shuffledDeterministically(seed: slug)
            guard buyers.count >= 7 else { continue }
            let card = [
                CheckoutRequest.Line(goodID: usd.id, quantity: 1, payIn: .usd, expectedUnitPrice: usd.priceCents)
            ]
            _ = try await place(buyers[0], card)
            let accepted = try await place(
                buyers[1], [.init(goodID: usd.id, quantity: 2, payIn: .usd, expectedUnitPrice: usd.priceCents)])
            _ = try await database.run(AdvanceOrder(orderID: accepted, move: .accept), context: partner)
            let shipped = try await place(buyers[2], card)
            _ = try await database.run(AdvanceOrder(orderID: shipped, move: .accept), context: partner)
            _ = try await database.runStaged(
                ShipOrder(orderID: shipped, carrier: "UPS", trackingNumber: "1Z999AA10123456784", payments: payments),
                context: partner)
            _ = try await database.runAsSystem(
                AdjustFitPoints(
                    customerID: buyers[3].id, points: points.priceFitPoints ?? 0,
                    reason: "demo: points to spend in the shop"),
                context: context)
            let delivered = try await place(
                buyers[3],
                [.init(goodID: points.id, quantity: 1, payIn: .fitpoints, expectedUnitPrice: points.priceFitPoints)]
                    + (usd.id == points.id ? [] : card))
            _ = try await database.run(AdvanceOrder(orderID: delivered, move: .accept), context: partner)
            _ = try await database.runStaged(
                ShipOrder(
                    orderID: delivered, carrier: "USPS", trackingNumber: "9400111899223197428490", payments: payments),
                context: partner)
            _ = try await database.run(AdvanceOrder(orderID: delivered, move: .deliver), context: partner)
            let cancelled = try await place(buyers[4], card)
            _ = try await database.runStaged(
                CancelOrder(orderID: cancelled, reason: "The customer asked to cancel", payments: payments),
                context: partner)
            _ = try await place(buyers[5], card, card: SimulatedPaymentGateway.pendingCard)
            let refunded = try await place(buyers[6], card)
            _ = try await database.run(AdvanceOrder(orderID: refunded, move: .accept), context: partner)
            _ = try await database.runStaged(
                ShipOrder(orderID: refunded, carrier: "FedEx", trackingNumber: "449044304137821", payments: payments),
                context: partner)
            _ = try await database.run(AdvanceOrder(orderID: refunded, move: .deliver), context: partner)
            _ = try await database.runStaged(
                RefundOrder(orderID: refunded, reason: "Arrived damaged", payments: payments), context: partner)
        }
    }

    /// Each demo partner's goods: sku, name, price in cents, in FitPoints, stock.
    static let demoGoods: [[(String, String, Int64?, Int64?, Int64)]] = [
        [
            ("GG-OATBAR-12", "Oat bar box (12)", 1800, 2000, 120), ("GG-NUTMIX", "Trail nut mix 500 g", 1200, nil, 80),
            ("GG-GREENS", "Greens powder 300 g", 3400, 4000, 25),
        ],
        [
            ("PP-WHEY-1KG", "Whey protein 1 kg", 3900, 4500, 60), ("PP-SHAKER", "Shaker bottle", nil, 900, 200),
            ("PP-CREATINE", "Creatine monohydrate 300 g", 2500, nil, 5),
        ],
    ]

    /// The reward economy's demo: the shipped earning rules, two badges, an active challenge,
    /// three days of activity (so balances and a leaderboard exist) and a manager's correction,
    /// all through the real operations.
    static func seedRewards(customers: [Customer], earningRules: URL?, database: Database, context: OperationContext)
        async throws
    {
        let now = database.clock.now()
        if let earningRules {
            let text = try String(contentsOf: earningRules, encoding: .utf8)
            let draft = try StructuredDocument.decode(Components.Schemas.EarningRulesDraft.self, from: text)
            _ = try await database.runAsSystem(SetEarningRules(EarningRules.Draft(draft)), context: context)
        }
        _ = try await database.runAsSystem(
            CreateBadge(
                slug: "winter-champion", name: "Winter Champion", description: "Top of the Winter Steps board.",
                metric: nil, threshold: nil),
            context: context)
        _ = try await database.runAsSystem(
            CreateBadge(
                slug: "first-5k", name: "First 5K", description: "Ran 5 km in one go.", metric: "distance_m",
                threshold: 5000),
            context: context)
        let challenge = try await database.runAsSystem(
            CreateChallenge(
                .init(
                    name: "Winter Steps", description: "Most steps between now and the holidays.", metric: "steps",
                    aggregation: "sum",
                    startsAt: now.addingTimeInterval(-3 * 86_400), endsAt: now.addingTimeInterval(11 * 86_400),
                    gracePeriod: "P2D", target: 100_000,
                    tiePolicy: "standard",
                    rankBands: [(1, 1, 500, "winter-champion"), (2, 3, 250, nil), (4, 10, 100, nil)],
                    targetReward: (50, nil), budgetPoints: 5_000)), context: context)
        _ = try await database.runAsSystem(PublishChallenge(challengeID: challenge.id), context: context)
        var events: [ActivityEventInput] = []
        for (index, customer) in customers.enumerated() {
            for day in 0..<3 {
                let time = now.addingTimeInterval(Double(-day * 86_400 - 3_600 - index * 60))
                let steps = Double(3_000 + (index * 7_919 + day * 3_571) % 12_000)
                events.append(
                    ActivityEventInput(
                        eventID: "demo-steps-\(index)-\(day)", customerID: customer.id.text, metric: "steps",
                        value: steps, occurredAt: time))
                if index % 3 == 0 {
                    events.append(
                        ActivityEventInput(
                            eventID: "demo-workout-\(index)-\(day)", customerID: customer.id.text,
                            metric: "workout_minutes",
                            value: Double(20 + index % 40),
                            occurredAt: time, details: ActivityDetails(met: Double(3 + index % 6), bodyweightKg: 70)))
                }
            }
            if index % 7 == 0 {
                events.append(
                    ActivityEventInput(
                        eventID: "demo-run-\(index)", customerID: customer.id.text, metric: "distance_m",
                        value: Double(4_000 + index * 60),
                        occurredAt: now.addingTimeInterval(-7_200)))
            }
        }
        _ = try await database.runAsSystem(IngestActivity(events: events), context: context)
        if let first = customers.first {
            _ = try await database.runAsSystem(
                AdjustFitPoints(
                    customerID: first.id, points: 150, reason: "Steps lost in the sync outage of last week"),
                context: context)
        }
    }
}

extension Array where Element == Customer {
    /// The customers in an order fixed by `seed` (each partner's demo orders come from different people).
    fileprivate func shuffledDeterministically(seed: String) -> [Customer] {
        sorted { "\(seed)\($0.email)".hashValue16 < "\(seed)\($1.email)".hashValue16 }
    }
}

extension String {
    /// A stable 16-bit digest (Swift's `hashValue` changes from run to run).
    fileprivate var hashValue16: UInt16 { utf8.reduce(UInt16(5381)) { ($0 &<< 5) &+ $0 &+ UInt16($1) } }
}
