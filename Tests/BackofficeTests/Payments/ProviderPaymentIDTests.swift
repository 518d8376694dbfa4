import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Provider payment ids")
struct ProviderPaymentIDTests {
    @Test(
        """
        a provider's payment id names one payment across tenants: the database refuses a second payment with it \
        in another tenant
        """
    )
    func uniqueAcrossTenants() async throws {
        try await TestEnvironment.with { env in
            let (first, second) = (
                try await ShopFixture.make(env, partner: 0), try await ShopFixture.make(env, partner: 1)
            )
            let app = env.fixture.tokens[.appService]!
            let orders = try await env.withApp { client in
                var orders: [String] = []
                for shop in [first, second] {
                    let placed = try await client.call(
                        .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                        headers: .newIdempotencyKey)
                    #expect(placed.status == 201, "\(placed.text)")
                    orders.append(try #require(placed["id"]))
                }
                return orders
            }
            let taken = try #require(
                try await env.ownerScalar(
                    "SELECT provider_payment_id FROM payments WHERE order_id = '\(orders[0])'", as: String.self))
            await #expect(throws: (any Error).self, "the other tenant's payment cannot take the same provider id") {
                try await env.asOwner(
                    "UPDATE payments SET provider_payment_id = '\(taken)' WHERE order_id = '\(orders[1])'")
            }
        }
    }
}
