import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Entitlements: the app's read of what the subscription records give, cacheable, never another's")
struct EntitlementTests {
    @Test(
        """
        none before subscribing, trialing after, canceling once canceled at period end; an unchanged answer is 304, \
        a changed one a new ETag; unknown and deleted customers 404; a partner's token 403
        """)
    func answers() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let customer = try await env.customer()
                let path = "/v1/customers/\(customer.id.text)/entitlements"
                let none = try await client.call(.get, path, token: app)
                #expect(none.status == 200 && none["premium"] == "0" && none["reason"] == "none", "\(none.text)")
                let tag = try #require(none.headers[.eTag])
                #expect(try await client.call(.get, path, token: app, headers: ["If-None-Match": tag]).status == 304)
                _ = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/subscriptions", token: app,
                    json: SubscribeTests.body(), headers: ["Idempotency-Key": UUID().uuidString])
                let trial = try await client.call(.get, path, token: app, headers: ["If-None-Match": tag])
                #expect(
                    trial.status == 200 && trial["premium"] == "1" && trial["reason"] == "trialing", "\(trial.text)")
                #expect(trial.headers[.eTag] != tag && trial["until"] != nil)
                try await env.asOwner(
                    "UPDATE subscriptions SET cancel_at_period_end = true, version = version + 1")
                let canceling = try await client.call(.get, path, token: app)
                #expect(canceling["reason"] == "trialing", "a trial canceled at its end is still a trial until then")
                #expect(
                    try await client.call(.get, "/v1/customers/\(UUID().uuidString)/entitlements", token: app)
                        .status == 404)
                #expect(
                    try await client.call(.get, path, token: env.fixture.partners[0].adminToken).status == 403,
                    "a partner never reads a customer's subscription")
                #expect(
                    try await client.call(.get, "/v1/customers/not-an-id/entitlements", token: app).status == 400)
            }
        }
    }

    @Test("an active subscription canceled at period end reads canceling, premium until the period's end")
    func canceling() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(try await RenewalTests.activeSubscriptions(env).first)
            try await env.asOwner("UPDATE subscriptions SET cancel_at_period_end = true WHERE id = '\(id.text)'")
            let customer = try #require(
                try await env.ownerScalar(
                    "SELECT customer_id FROM subscriptions WHERE id = '\(id.text)'", as: UUID.self))
            let entitlement = try await env.database.read(
                GetEntitlement(customerID: customer), context: env.context(.appService))
            #expect(entitlement.premium && entitlement.reason == .canceling && entitlement.subscriptionID == id)
        }
    }
}
