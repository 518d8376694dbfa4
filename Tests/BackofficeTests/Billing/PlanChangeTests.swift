import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Plan and price changes: proration to the cent, credits carried, a new price only after its notice")
struct PlanChangeTests {
    static func change(
        _ client: any TestClientProtocol, _ env: TestEnvironment, _ subscription: String, to plan: String
    ) async throws -> Reply {
        try await client.call(
            .put, "/v1/subscriptions/\(subscription)/plan", token: env.fixture.tokens[.appService]!,
            json: #"{"plan": "\#(plan)"}"#, headers: ["Idempotency-Key": UUID().uuidString])
    }

    static func invoices(_ env: TestEnvironment, _ subscription: String) async throws -> String? {
        try await env.ownerScalar(
            """
            SELECT string_agg(kind || ':' || status || ':' || amount_cents || ':' || credit_applied_cents, ','
                ORDER BY created_at, period_start)
            FROM invoices WHERE subscription_id = '\(subscription)'
            """, as: String.self)
    }

    @Test("monthly to annual a quarter into the month: the annual price less the unused month, charged at once")
    func upgrade() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let (subscription, invoice) = try await SubscriptionChangeTests.paidSubscription(env, client)
                let seconds = try #require(
                    try await env.ownerScalar(
                        """
                        SELECT extract(epoch FROM period_end - period_start)::bigint FROM invoices
                        WHERE id = '\(invoice)'
                        """,
                        as: Int64.self))
                env.clock.advance(by: Double(seconds / 4))
                let changed = try await Self.change(client, env, subscription, to: "annual")
                #expect(changed.status == 200 && changed["plan"] == "annual", "\(changed.text)")
                let unused = Proration.rounded(999 * (seconds - seconds / 4), dividedBy: seconds)
                #expect(
                    try await Self.invoices(env, subscription)
                        == "first:paid:999:0,plan_change:paid:\(9_588 - unused):0")
                let period = try changed.decode(Components.Schemas.Subscription.self)
                let expected = BillingCycle(anchor: env.clock.now(), interval: .year).period(0)
                #expect(
                    abs((period.currentPeriodEnd ?? .distantPast).timeIntervalSince(expected.upperBound)) < 1,
                    "a year from the change")
                let same = try await Self.change(client, env, subscription, to: "annual")
                #expect(same.status == 200 && same["version"] == changed["version"], "the same plan changes nothing")
                #expect(try await Self.change(client, env, subscription, to: "weekly").status == 422)
            }
        }
    }

    @Test("annual to monthly at once: the unused year is a credit, the month paid from it, then the renewals too")
    func downgradeKeepsCredit() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let customer = try await SubscribeTests.returningCustomer(env)
                let annual = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/subscriptions", token: env.fixture.tokens[.appService]!,
                    json: SubscribeTests.body("annual"), headers: ["Idempotency-Key": UUID().uuidString])
                let subscription = try #require(annual["id"])
                let changed = try await Self.change(client, env, subscription, to: "monthly")
                #expect(changed.status == 200 && changed["credit_cents"] == "\(9_588 - 999)", "\(changed.text)")
                #expect(
                    try await Self.invoices(env, subscription) == "first:paid:9588:0,plan_change:paid:0:0",
                    "the month is paid from the credit: nothing asked of the provider")
                env.clock.advance(by: 32 * 86_400)
                #expect(try await RenewalTests.renew(env).invoiced == 1)
                #expect(
                    try await Self.invoices(env, subscription)
                        == "first:paid:9588:0,plan_change:paid:0:0,renewal:paid:0:999")
                #expect(
                    try await env.ownerScalar(
                        "SELECT credit_cents FROM subscriptions WHERE id = '\(subscription)'", as: Int64.self)
                        == 9_588 - 2 * 999)
            }
        }
    }

    @Test("a declined upgrade is 402 and changes nothing; past-due subscriptions cannot change plan")
    func declined() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let (subscription, _) = try await SubscriptionChangeTests.paidSubscription(env, client)
                try await env.asOwner(
                    "UPDATE subscriptions SET payment_method = 'pm_card_chargeDeclined' WHERE id = '\(subscription)'")
                let version = try await env.ownerScalar(
                    "SELECT version FROM subscriptions WHERE id = '\(subscription)'", as: Int64.self)
                let refused = try await Self.change(client, env, subscription, to: "annual")
                #expect(refused.status == 402 && refused["code"] == "card_declined", "\(refused.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT plan || ' ' || version FROM subscriptions WHERE id = '\(subscription)'",
                        as: String.self) == "monthly \(version ?? 0)")
                let pastDue = try #require(
                    try await RenewalTests.activeSubscriptions(env, method: SimulatedPaymentGateway.declinedMethod)
                        .first)
                env.clock.advance(by: 32 * 86_400)
                _ = try await RenewalTests.renew(env)
                #expect(try await Self.change(client, env, pastDue.text, to: "annual").status == 409)
            }
        }
    }

    @Test("a plan's new price: each subscriber mailed once; billed from the first renewal after the notice")
    func priceChange() async throws {
        try await TestEnvironment.with { env in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("policies-\(UUID().uuidString)")
            try FileManager.default.copyItem(at: projectRoot.appendingPathComponent("policies"), to: folder)
            defer { try? FileManager.default.removeItem(at: folder) }
            let plans = folder.appendingPathComponent("billing/plans.yaml")
            // A notice of 40 days: the first renewal (28 to 31 days on, whatever today's month) falls inside it,
            // the second (59 to 62) after it.
            try String(contentsOf: plans, encoding: .utf8).replacingOccurrences(
                of: "price_cents: 999", with: "price_cents: 1099"
            ).replacingOccurrences(of: "notice_days: 30", with: "notice_days: 40")
                .write(to: plans, atomically: true, encoding: .utf8)
            let raised = try PolicySet.load(from: folder)
            let id = try #require(try await RenewalTests.activeSubscriptions(env).first)
            let run = {
                try await RenewSubscriptions(payments: SimulatedPaymentGateway()).run(
                    env.database, context: .system("renewals", policies: raised), system: true)
            }
            _ = try await run()
            _ = try await run()
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM outbox WHERE kind = 'subscription_price_change'", as: Int.self) == 1,
                "told once")
            env.clock.advance(by: 31 * 86_400)
            #expect(try await run().paid == 1)
            env.clock.advance(by: 31 * 86_400)
            #expect(try await run().paid == 1)
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT string_agg(amount_cents::text, ',' ORDER BY period_start) FROM invoices
                    WHERE subscription_id = '\(id.text)'
                    """, as: String.self) == "999,1099", "the renewal inside the notice keeps the old price")
        }
    }
}
