import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Account rewards")
struct AccountRewardTests {
    @Test(
        """
        a subscription that starts or renews earns its event points once per period (the records' changes, not \
        the app's sync); a second renewal run earns nothing more
        """
    )
    func subscriptionEvents() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                #expect(try await EarningTests.setRules(client, env).status == 200)
                let newcomer = try await env.customer()
                let trial = try await client.call(
                    .post, "/v1/customers/\(newcomer.id.text)/subscriptions", token: app, json: SubscribeTests.body(),
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(trial["status"] == "trialing")
                let balance = try await client.call(
                    .get, "/v1/customers/\(newcomer.id.text)/fitpoints", token: manager)["balance"]
                #expect(balance == "0", "no rule pays a start, nor a trial's first period")
                let subscription = try #require(try await RenewalTests.activeSubscriptions(env).first)
                let id = try #require(
                    try await env.ownerScalar(
                        "SELECT customer_id FROM subscriptions WHERE id = '\(subscription.text)'", as: UUID.self))
                env.clock.advance(by: 31 * 86_400)
                #expect(try await RenewalTests.renew(env).paid == 2, "the trial's first period, the renewal")
                #expect(try await RenewalTests.renew(env) == RenewalReport())
                let invoice = try #require(
                    try await env.ownerScalar(
                        "SELECT id FROM invoices WHERE subscription_id = '\(subscription.text)'", as: UUID.self))
                let ledger = try await client.call(.get, "/v1/customers/\(id.text)/fitpoints/ledger", token: manager)
                    .decode(Components.Schemas.LedgerPage.self)
                #expect(ledger.items.map(\.points) == [200])
                #expect(ledger.items.first?.ruleId == "event:subscription_renewal")
                #expect(ledger.items.first?.sourceEventId == "subscription_renewal:\(invoice.text)")
            }
            let audited = try await env.ownerScalar(
                """
                SELECT count(*) FROM audit_events WHERE target_type = 'fitpoints_wallet'
                    AND action = 'subscriptions.renew'
                """, as: Int.self)
            #expect(audited == 1)
        }
    }
}
