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

/// A shop with goods on sale, a customer with FitPoints, and checkout bodies.
struct ShopFixture {
    let env: TestEnvironment
    let partner: TestEnvironment.Fixture.Partner
    let customer: Customer
    /// sku → good id: BOTTLE (2,500 ¢ or 3,000 points, stock 10), MAT (4,900 ¢ only, stock 5), BAND (800 points only,
    /// stock 3).
    let goods: [String: UUID]

    static func make(_ env: TestEnvironment, partner index: Int = 0, points: Int64 = 5_000) async throws -> ShopFixture
    {
        let partner = env.fixture.partners[index]
        let admin = OperationContext(
            principal: partner.admin, requestID: "fixture", sourceIP: nil, policies: env.policies)
        var goods: [String: UUID] = [:]
        for (sku, cents, fitpoints, stock) in [
            ("BOTTLE", 2_500, 3_000, 10), ("MAT", 4_900, nil, 5), ("BAND", nil, 800, 3),
        ]
            as [(String, Int64?, Int64?, Int64)]
        {
            let good = try await env.database.run(
                CreateGood(
                    sku: "\(sku)-\(index)",
                    fields: GoodFields(
                        name: sku.capitalized, description: nil, category: "gear", priceCents: cents,
                        priceFitPoints: fitpoints, stock: stock,
                        imageURLs: nil)),
                context: admin)
            _ = try await env.database.run(
                UpdateGood(goodID: good.id, changes: GoodChanges(status: .active), ifMatch: "1"), context: admin)
            goods[sku] = good.id
        }
        let customer = try await env.customer()
        if points > 0 {
            _ = try await env.database.run(
                AdjustFitPoints(customerID: customer.id, points: points, reason: "welcome"),
                context: env.context(.backendManager))
        }
        return ShopFixture(env: env, partner: partner, customer: customer, goods: goods)
    }

    /// The unit prices the fixture's goods are created with, by sku and currency.
    static let prices: [String: Int64] = [
        "BOTTLE usd": 2_500, "BOTTLE fitpoints": 3_000, "MAT usd": 4_900, "BAND fitpoints": 800,
    ]

    /// A checkout of `lines` (sku, quantity, currency), each at the price the fixture set (1 where it set none), or at
    /// `prices`.
    func checkoutJSON(
        _ lines: [(String, Int, String)], card: String? = SimulatedPaymentGateway.approvedCard, customer: UUID? = nil,
        prices: [String: Int64] = [:]
    ) -> String {
        let items = lines.map { sku, quantity, currency in
            let price = prices["\(sku) \(currency)"] ?? Self.prices["\(sku) \(currency)"] ?? 1
            let field = currency == "usd" ? "expected_unit_price_cents" : "expected_unit_price_fitpoints"
            return
                #"""
                {"good_id": "\#(goods[sku]!.uuidString.lowercased())", "quantity": \#(quantity),\#
                 "pay_in": "\#(currency)", "\#(field)": \#(price)}
                """#
        }
        let payment = card.map { #", "payment_method": "\#($0)""# } ?? ""
        return """
            {"customer_id": "\((customer ?? self.customer.id).uuidString.lowercased())", \
            "lines": [\(items.joined(separator: ", "))],
             "shipping": {"name": "Ada Lovelace", "address": {"line1": "12 Analytical St", "city": "London", \
            "region": "LDN", "postal_code": "N1", "country": "GB"}}\(payment)}
            """
    }

    /// A checkout of `lines` (sku, quantity, currency) at the fixture's prices, paid by an approved card, for
    /// `customer`.
    func request(_ lines: [(String, Int, OrderLine.Currency)], customer: UUID? = nil) -> CheckoutRequest {
        CheckoutRequest(
            customerID: customer ?? self.customer.id,
            lines: lines.map { sku, quantity, currency in
                .init(
                    goodID: goods[sku]!, quantity: quantity, payIn: currency,
                    expectedUnitPrice: Self.prices["\(sku) \(currency.rawValue)"])
            },
            shipping: Order.Shipping(
                name: "Buyer",
                address: ShopAddress(
                    line1: "1 St", line2: nil, city: "Town", region: "TX", postalCode: "1", country: "US")),
            paymentMethod: SimulatedPaymentGateway.approvedCard)
    }

    func stock(_ sku: String) async throws -> Int? {
        try await env.ownerScalar(
            "SELECT stock FROM goods WHERE id = '\(goods[sku]!.uuidString.lowercased())'", as: Int.self)
    }

    func balance() async throws -> Int64? {
        try await env.ownerScalar(
            "SELECT balance FROM fitpoints_accounts WHERE id = '\(customer.id.uuidString.lowercased())'", as: Int64.self
        )
    }
}
