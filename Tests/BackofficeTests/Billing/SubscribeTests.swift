import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Subscribing: a trial once, the first invoice charged once, one live subscription per customer")
struct SubscribeTests {
    static func body(_ plan: String = "monthly", _ method: String = SimulatedPaymentGateway.approvedMethod) -> String {
        #"{"plan": "\#(plan)", "payment_method": "\#(method)"}"#
    }

    /// A customer who had a subscription before (so no trial is given): a canceled one, written as its owner.
    static func returningCustomer(_ env: TestEnvironment) async throws -> Customer {
        let customer = try await env.customer()
        _ = try await env.ownerScalar(
            """
            INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method,
                current_period_start, current_period_end, ended_at, created_at, updated_at)
            VALUES (gen_random_uuid(), '\(customer.id.text)', 'monthly', 999, 'month', 'canceled', 'pm_card_visa',
                now() - interval '60 days', now() - interval '30 days', now() - interval '30 days',
                now() - interval '60 days', now() - interval '30 days')
            RETURNING 1
            """, as: Int.self)
        return customer
    }

    @Test("a first subscription is a trial (nothing charged); a returning customer's first invoice is charged and paid")
    func trialThenCharge() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let newcomer = try await env.customer()
                let trial = try await client.call(
                    .post, "/v1/customers/\(newcomer.id.text)/subscriptions", token: app, json: Self.body(),
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(trial.status == 201 && trial["status"] == "trialing", "\(trial.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM invoices WHERE customer_id = '\(newcomer.id.text)'", as: Int.self) == 0)
                let returning = try await Self.returningCustomer(env)
                let key = UUID().uuidString
                let paid = try await client.call(
                    .post, "/v1/customers/\(returning.id.text)/subscriptions", token: app, json: Self.body(),
                    headers: ["Idempotency-Key": key])
                #expect(paid.status == 201 && paid["status"] == "active", "\(paid.text)")
                let again = try await client.call(
                    .post, "/v1/customers/\(returning.id.text)/subscriptions", token: app, json: Self.body(),
                    headers: ["Idempotency-Key": key])
                #expect(again.status == 201 && again["id"] == paid["id"], "replayed, not charged again")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT string_agg(status || ':' || amount_cents || ':' || (provider_payment_id IS NOT NULL),
                            ',')
                        FROM invoices WHERE customer_id = '\(returning.id.text)'
                        """, as: String.self) == "paid:999:true")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'subscriptions.create'", as: Int.self) == 3,
                    "the trial's; the charged one's reservation and verdict")
            }
        }
    }

    @Test("a declined first charge: 402 with its code, the subscription canceled, the invoice failed; replayed alike")
    func declined() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let customer = try await Self.returningCustomer(env)
                let key = UUID().uuidString
                let path = "/v1/customers/\(customer.id.text)/subscriptions"
                let body = Self.body("monthly", SimulatedPaymentGateway.declinedMethod)
                let refused = try await client.call(
                    .post, path, token: app, json: body, headers: ["Idempotency-Key": key])
                #expect(refused.status == 402 && refused["code"] == "card_declined", "\(refused.text)")
                let again = try await client.call(
                    .post, path, token: app, json: body, headers: ["Idempotency-Key": key])
                #expect(again.status == 402 && again["code"] == "card_declined", "\(again.text)")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT string_agg(s.status || '/' || i.status || '/' || i.failure_code, ',')
                        FROM subscriptions s JOIN invoices i ON i.subscription_id = s.id
                        WHERE s.customer_id = '\(customer.id.text)'
                        """, as: String.self) == "canceled/failed/card_declined")
            }
        }
    }

    @Test("30 subscribes at once for one customer: one live subscription, the others 409 already_subscribed")
    func concurrentSubscribes() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let customer = try await Self.returningCustomer(env)
                let path = "/v1/customers/\(customer.id.text)/subscriptions"
                let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            let reply = try await client.call(
                                .post, path, token: app, json: Self.body(),
                                headers: ["Idempotency-Key": UUID().uuidString])
                            return (reply.status, reply["code"])
                        }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0.0 == 201 }.count == 1, "\(statuses)")
                #expect(statuses.filter { $0.0 == 409 && $0.1 == "already_subscribed" }.count == 29, "\(statuses)")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM subscriptions WHERE customer_id = '\(customer.id.text)'
                            AND status IN ('incomplete', 'trialing', 'active', 'past_due')
                        """, as: Int.self) == 1)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM invoices WHERE customer_id = '\(customer.id.text)'", as: Int.self) == 1)
            }
        }
    }

    @Test("an unknown plan or a card number for a payment method is 422 naming the field, and changes nothing")
    func refused() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let customer = try await env.customer()
                let path = "/v1/customers/\(customer.id.text)/subscriptions"
                let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                for (body, field) in [
                    (Self.body("weekly"), "plan"), (Self.body("monthly", "4242424242424242"), "payment_method"),
                    (Self.body("monthly", "pm_card visa"), "payment_method"),
                ] {
                    let reply = try await client.call(
                        .post, path, token: app, json: body, headers: ["Idempotency-Key": UUID().uuidString])
                    #expect(reply.status == 422 && reply.text.contains(field), "\(body): \(reply.text)")
                }
                #expect(try await env.ownerScalar("SELECT count(*) FROM subscriptions", as: Int.self) == 0)
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events)
            }
        }
    }
}
