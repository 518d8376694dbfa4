import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Subscription changes: refunds never above what was paid, cancellations, resuming, a new payment method")
struct SubscriptionChangeTests {
    /// A returning customer subscribed and charged at once: the subscription's id and its paid invoice's.
    static func paidSubscription(_ env: TestEnvironment, _ client: any TestClientProtocol) async throws
        -> (subscription: String, invoice: String)
    {
        let customer = try await SubscribeTests.returningCustomer(env)
        let paid = try await client.call(
            .post, "/v1/customers/\(customer.id.text)/subscriptions", token: env.fixture.tokens[.appService]!,
            json: SubscribeTests.body(), headers: ["Idempotency-Key": UUID().uuidString])
        let subscription = try #require(paid["id"], "\(paid.text)")
        let invoice = try #require(
            try await env.ownerScalar(
                "SELECT id::text FROM invoices WHERE subscription_id = '\(subscription)' AND status = 'paid'",
                as: String.self))
        return (subscription, invoice)
    }

    @Test("30 partial refunds at once of one invoice: their sum never exceeds what was paid; the rest 422")
    func concurrentRefunds() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let (_, invoice) = try await Self.paidSubscription(env, client)
                let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            let reply = try await client.call(
                                .post, "/v1/invoices/\(invoice)/refunds", token: manager,
                                json: #"{"amount_cents": 100, "reason": "goodwill"}"#,
                                headers: ["Idempotency-Key": UUID().uuidString])
                            return (reply.status, reply["code"])
                        }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0.0 == 201 }.count == 9, "\(statuses)")
                #expect(statuses.filter { $0.0 == 422 && $0.1 == "validation_failed" }.count == 21, "\(statuses)")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT refunded_cents || '/' || (SELECT sum(amount_cents) FROM invoice_refunds
                            WHERE invoice_id = i.id AND status = 'succeeded')
                        FROM invoices i WHERE id = '\(invoice)'
                        """, as: String.self) == "900/900")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM invoice_refunds WHERE status <> 'succeeded'", as: Int.self) == 0,
                    "no refund was reserved beyond what was paid")
                let rest = try await client.call(
                    .post, "/v1/invoices/\(invoice)/refunds", token: manager, json: #"{"reason": "the rest"}"#,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(rest.status == 201 && rest["amount_cents"] == "99", "\(rest.text)")
                let more = try await client.call(
                    .post, "/v1/invoices/\(invoice)/refunds", token: manager,
                    json: #"{"amount_cents": 1, "reason": "more"}"#, headers: ["Idempotency-Key": UUID().uuidString])
                #expect(more.status == 422 && more.text.contains("exceeds_refundable"), "\(more.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'invoices.refund'", as: Int.self) == 20,
                    "each refund's reservation and verdict")
            }
        }
    }

    @Test("a manager cancels at once with a prorated refund: the entitlement ends, the unused part is refunded")
    func managerCancel() async throws {
        try await TestEnvironment.with { env in
            let (manager, app) = (env.fixture.tokens[.backendManager]!, env.fixture.tokens[.appService]!)
            try await env.withApp { client in
                let (subscription, invoice) = try await Self.paidSubscription(env, client)
                let period = try #require(
                    try await env.ownerScalar(
                        """
                        SELECT extract(epoch FROM period_end - period_start)::bigint FROM invoices
                        WHERE id = '\(invoice)'
                        """, as: Int64.self))
                env.clock.advance(by: Double(period) / 4)
                let path = "/v1/subscriptions/\(subscription)/cancel"
                let body = #"{"reason": "charged after asking to stop", "refund": "prorated"}"#
                let key = UUID().uuidString
                let canceled = try await client.call(
                    .post, path, token: manager, json: body, headers: ["Idempotency-Key": key])
                #expect(canceled.status == 200, "\(canceled.text)")
                let refund = try canceled.decode(Components.Schemas.SubscriptionDetail.self).refund
                #expect(refund?.amountCents == Proration.rounded(999 * 3, dividedBy: 4), "\(canceled.text)")
                #expect(refund?.status == .succeeded)
                let again = try await client.call(
                    .post, path, token: manager, json: body, headers: ["Idempotency-Key": key])
                #expect(again.text == canceled.text, "replayed, not refunded twice")
                let other = try await client.call(
                    .post, path, token: manager, json: body, headers: ["Idempotency-Key": UUID().uuidString])
                #expect(other.status == 409)
                let customer = try #require(
                    try await env.ownerScalar(
                        "SELECT customer_id::text FROM subscriptions WHERE id = '\(subscription)'", as: String.self))
                let entitlement = try await client.call(.get, "/v1/customers/\(customer)/entitlements", token: app)
                #expect(entitlement["premium"] == "0" && entitlement["reason"] == "canceled")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM invoice_refunds WHERE invoice_id = '\(invoice)'", as: Int.self) == 1)
            }
        }
    }

    @Test("the app cancels at period end and resumes; canceled again, the period's end ends it")
    func cancelAtPeriodEndAndResume() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let (subscription, _) = try await Self.paidSubscription(env, client)
                let path = "/v1/subscriptions/\(subscription)"
                let canceling = try await client.call(.post, path + "/cancel-at-period-end", token: app)
                #expect(canceling.status == 200 && canceling["cancel_at_period_end"] == "1", "\(canceling.text)")
                let resumed = try await client.call(.post, path + "/resume", token: app)
                #expect(resumed["cancel_at_period_end"] == "0" && resumed["status"] == "active")
                _ = try await client.call(.post, path + "/cancel-at-period-end", token: app)
                env.clock.advance(by: 32 * 86_400)
                #expect(try await RenewalTests.renew(env).ended == 1)
                let ended = try await client.call(.post, path + "/resume", token: app)
                #expect(ended.status == 409, "an ended subscription does not resume: \(ended.text)")
            }
        }
    }

    @Test("a past-due subscription given a new payment method is charged at once: active again")
    func newPaymentMethod() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            let id = try #require(
                try await RenewalTests.activeSubscriptions(env, method: SimulatedPaymentGateway.declinedMethod).first)
            env.clock.advance(by: 31 * 86_400)
            #expect(try await RenewalTests.renew(env).retrying == 1)
            try await env.withApp { client in
                let path = "/v1/subscriptions/\(id.text)/payment-method"
                let still = try await client.call(
                    .put, path, token: app, json: #"{"payment_method": "pm_card_chargeDeclinedInsufficientFunds"}"#,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(still.status == 200 && still["status"] == "past_due", "\(still.text)")
                let card = try await client.call(
                    .put, path, token: app, json: #"{"payment_method": "4242424242424242"}"#,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(card.status == 422, "a card number is never a payment method")
                let paid = try await client.call(
                    .put, path, token: app, json: #"{"payment_method": "pm_card_visa"}"#,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(paid.status == 200 && paid["status"] == "active", "\(paid.text)")
            }
            #expect(try await RenewalTests.state(env, id) == "active paid:3")
        }
    }

    @Test("managers and auditors list and read subscriptions with invoices and refunds; partners and the app cannot")
    func listAndShow() async throws {
        try await TestEnvironment.with { env in
            let (manager, auditor) = (env.fixture.tokens[.backendManager]!, env.fixture.tokens[.auditor]!)
            try await env.withApp { client in
                let (subscription, invoice) = try await Self.paidSubscription(env, client)
                _ = try await client.call(
                    .post, "/v1/invoices/\(invoice)/refunds", token: manager,
                    json: #"{"amount_cents": 250, "reason": "goodwill"}"#, headers: ["Idempotency-Key": "r-1"])
                let active = try await client.call(.get, "/v1/subscriptions?status=active", token: auditor)
                    .decode(Components.Schemas.SubscriptionPage.self)
                #expect(active.items.map(\.id).contains(subscription))
                #expect(active.items.allSatisfy { $0.status == .active })
                let shown = try await client.call(.get, "/v1/subscriptions/\(subscription)", token: manager)
                    .decode(Components.Schemas.SubscriptionDetail.self)
                #expect(shown.invoices.first?.refundedCents == 250)
                #expect(shown.invoices.first?.refunds.map(\.amountCents) == [250])
                for token in [env.fixture.partners[0].adminToken, env.fixture.tokens[.appService]!] {
                    #expect(try await client.call(.get, "/v1/subscriptions", token: token).status == 403)
                }
                #expect(
                    try await client.call(.get, "/v1/subscriptions/\(UUID().uuidString)", token: manager).status
                        == 404)
            }
        }
    }

    @Test("a dispute by signed webhook is recorded on the invoice and shown; closed lost; forged or repeated, nothing")
    func disputes() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let (subscription, invoice) = try await Self.paidSubscription(env, client)
                let payment = try #require(
                    try await env.ownerScalar(
                        "SELECT provider_payment_id FROM invoices WHERE id = '\(invoice)'", as: String.self))
                func deliver(
                    _ id: String, _ type: String, _ extra: String, secret: String = TestEnvironment.webhookSecret
                )
                    async throws -> Reply
                {
                    let body = #"{"id": "\#(id)", "type": "\#(type)", "data": {"payment_id": "\#(payment)"\#(extra)}}"#
                    let signature = WebhookSignature.header(
                        body: Array(body.utf8), secrets: [secret], at: env.clock.now())
                    return try await client.call(
                        .post, "/v1/payments/webhooks/simulated", token: nil, json: body,
                        headers: ["Webhook-Signature": signature])
                }
                let forged = try await deliver(
                    "evt_d0", "dispute.created", #", "amount_cents": 999"#, secret: "whsec_not_the_provider")
                #expect(forged.status == 400)
                let opened = try await deliver(
                    "evt_d1", "dispute.created", #", "amount_cents": 999, "reason": "fraudulent""#)
                #expect(opened["outcome"] == "dispute_opened", "\(opened.text)")
                #expect(try await deliver("evt_d1", "dispute.created", "")["duplicate"] == "1")
                let lost = try await deliver("evt_d2", "dispute.closed", #", "status": "lost""#)
                #expect(lost["outcome"] == "dispute_lost", "\(lost.text)")
                let shown = try await client.call(.get, "/v1/subscriptions/\(subscription)", token: manager)
                    .decode(Components.Schemas.SubscriptionDetail.self)
                let dispute = try #require(shown.invoices.first?.dispute)
                #expect(dispute.status == .lost && dispute.amountCents == 999 && dispute.reason == "fraudulent")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE action = 'payments.webhook' AND target_type = 'invoice'
                            AND target_id = '\(invoice)'
                        """, as: Int.self) == 2)
            }
        }
    }
}
