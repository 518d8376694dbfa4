import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Billing in the console and on the manager's home: past due found, invoices read, part refunded, figures kept")
struct ConsoleBillingTests {
    static let day: TimeInterval = 86_400

    /// Subscriptions renewed a month on: two paid, one declined (past due); one annual besides.
    static func business(_ env: TestEnvironment) async throws -> (paid: [UUID], pastDue: UUID) {
        let paid = try await RenewalTests.activeSubscriptions(env, count: 2)
        let pastDue = try #require(
            try await RenewalTests.activeSubscriptions(env, method: SimulatedPaymentGateway.declinedMethod).first)
        env.clock.advance(by: 31 * Self.day)
        let report = try await RenewalTests.renew(env)
        #expect(report.paid == 2 && report.retrying == 1, "\(report)")
        return (paid, pastDue)
    }

    @Test(
        """
        the day's figures kept by the database equal the records: paying subscribers and MRR (an annual plan a \
        twelfth), started, churned, declined renewals and revenue recovered by a retry
        """
    )
    func figures() async throws {
        try await TestEnvironment.with { env in
            let start = UTCDay(env.clock.now())
            let (paid, pastDue) = try await Self.business(env)
            let customer = try await env.customer()
            try await env.asOwner(
                """
                INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method,
                    anchor, current_period_start, current_period_end, created_at, updated_at)
                VALUES (gen_random_uuid(), '\(customer.id.text)', 'annual', 9588, 'year', 'active', 'pm_card_visa',
                    now(), now(), now() + interval '1 year', now(), now())
                """)
            try await env.asOwner(
                "UPDATE subscriptions SET payment_method = 'pm_card_visa' WHERE id = '\(pastDue.text)'")
            env.clock.advance(by: 1 * Self.day)
            #expect(try await RenewalTests.renew(env).paid == 1, "the retry recovers")
            _ = try await env.database.runStaged(
                CancelSubscription(
                    subscriptionID: paid[0], reason: "asked by phone", refund: .none,
                    payments: SimulatedPaymentGateway()),
                context: env.context(.backendManager))
            let range = try ReportRange(from: start, through: UTCDay(env.clock.now()))
            let days = try await env.database.read(
                SubscriptionFiguresOverTime(range: range), context: env.context(.backendManager))
            let last = try #require(days.last)
            let records = try #require(
                try await env.ownerScalar(
                    """
                    SELECT count(*) || ' ' || sum(CASE billing_interval WHEN 'year' THEN price_cents / 12
                        ELSE price_cents END) FROM subscriptions WHERE status IN ('active', 'past_due')
                    """, as: String.self))
            #expect("\(last.paying) \(last.mrrCents)" == records && records == "3 2797", "two monthly, one annual")
            #expect(days.reduce(0) { $0 + $1.started } == 4)
            #expect(days.reduce(0) { $0 + $1.churned } == 1)
            #expect(days.reduce(0) { $0 + $1.failedRenewals } == 1)
            #expect(days.reduce(0) { $0 + $1.recoveredCents } == 999)
            #expect(days[31].failedRenewals == 1 && days[32].recoveredCents == 999, "on the day of each")
        }
    }

    @Test(
        """
        a manager finds the past-due customer, reads the invoices, refunds part of one (unconfirmed or a bad \
        amount: 422, nothing refunded); the home shows the subscription figures; an auditor reads but has no forms
        """
    )
    func consoleRefund() async throws {
        try await TestEnvironment.with { env in
            let (paid, pastDue) = try await Self.business(env)
            let customer = try #require(
                try await env.ownerScalar(
                    "SELECT customer_id::text FROM subscriptions WHERE id = '\(pastDue.text)'", as: String.self))
            let payer = try #require(
                try await env.ownerScalar(
                    "SELECT customer_id::text FROM subscriptions WHERE id = '\(paid[0].text)'", as: String.self))
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let board = try await manager.get("/console/billing")
                #expect(board.status == 200 && board.text.contains("/console/accounts/\(customer)/subscription"))
                #expect(board.text.contains("card_declined") && !board.text.contains(payer), "past due only")
                let email = try #require(
                    try await env.ownerScalar("SELECT email FROM customers WHERE id = '\(customer)'", as: String.self))
                #expect(board.text.contains(">\(email)</a>"), "the customer by email")
                let page = try await manager.get("/console/accounts/\(payer)/subscription")
                #expect(page.status == 200 && page.text.contains("$9.99") && page.text.contains("id=\"refund-form\""))
                let csrf = try #require(page.csrf)
                let invoice = try #require(
                    try await env.ownerScalar(
                        "SELECT id::text FROM invoices WHERE subscription_id = '\(paid[0].text)' AND status = 'paid'",
                        as: String.self))
                let path = "/console/accounts/\(payer)/subscription/refund"
                let fields = ["invoice": invoice, "amount": "4.50", "reason": "a goodwill gesture"]
                let unconfirmed = try await manager.post(path, fields, csrf: csrf)
                #expect(unconfirmed.status == 422 && unconfirmed.text.contains("confirm_refund-error"))
                for amount in ["4.505", "-1", "1e3", "10.00"] {
                    var bad = fields
                    (bad["amount"], bad["confirm_refund"]) = (amount, "yes")
                    let refused = try await manager.post(path, bad, csrf: csrf)
                    #expect(refused.status == 422, "\(amount): \(refused.status)")
                }
                #expect(
                    try await env.ownerScalar(
                        "SELECT refunded_cents FROM invoices WHERE id = '\(invoice)'", as: Int64.self)
                        == 0)
                var confirmed = fields
                confirmed["confirm_refund"] = "yes"
                let refunded = try await manager.post(path, confirmed, csrf: csrf)
                #expect(refunded.status == 303, "\(refunded.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT refunded_cents FROM invoices WHERE id = '\(invoice)'", as: Int64.self)
                        == 450)
                #expect(try await manager.get("/console/accounts/\(payer)/subscription").text.contains("$4.50"))
                let home = try await manager.get("/console/home")
                #expect(
                    home.text.contains("id=\"subscription-totals\"") && home.text.contains("Monthly recurring revenue"))
                #expect(
                    home.text.contains("$29.97"),
                    "three paying monthly subscribers (past due included) at the period's end")
                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let read = try await auditor.get("/console/accounts/\(payer)/subscription")
                #expect(read.status == 200 && read.text.contains("$4.50") && !read.text.contains("refund-form"))
            }
        }
    }
}
