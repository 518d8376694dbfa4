import BackofficeAPI
import Foundation
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// The simulated provider, counting the charge calls made under each idempotency key, and able to
/// lose the answer of the first charges it makes (the work done, then a timeout to the caller) or to
/// run `beforeCharge` before each charge (to hold it there).
final class CountingGateway: PaymentGateway {
    private let inner: SimulatedPaymentGateway
    private let calls = Mutex<[String: Int]>([:])
    private let answersToLose: Mutex<Int>
    private let beforeCharge: @Sendable () async -> Void
    let provider = "simulated"

    init(
        losingAnswers: Int = 0, record: SimulatedPaymentRecord = .process,
        beforeCharge: @escaping @Sendable () async -> Void = {}
    ) {
        answersToLose = Mutex(losingAnswers)
        inner = SimulatedPaymentGateway(record: record)
        self.beforeCharge = beforeCharge
    }

    /// Charge calls per idempotency key.
    var charges: [String: Int] { calls.withLock { $0 } }

    func charge(_ request: PaymentCharge) async throws -> PaymentOutcome {
        calls.withLock { $0[request.idempotencyKey, default: 0] += 1 }
        await beforeCharge()
        let outcome = try await inner.charge(request)
        let lose = answersToLose.withLock { count -> Bool in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
        if lose { throw PaymentProviderError.timeout }
        return outcome
    }

    func find(reference: String) async throws -> PaymentOutcome? { try await inner.find(reference: reference) }
    func charges(since: Date) async throws -> ProviderCharges { try await inner.charges(since: since) }
    func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification {
        try await inner.verifyBankAccount(account)
    }
    func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome {
        try await inner.authorize(request)
    }
    func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        try await inner.capture(paymentID: paymentID, amountCents: amountCents, idempotencyKey: idempotencyKey)
    }
    func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        try await inner.refund(paymentID: paymentID, amountCents: amountCents, idempotencyKey: idempotencyKey)
    }
    func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome {
        try await inner.void(paymentID: paymentID, idempotencyKey: idempotencyKey)
    }
    func status(of paymentID: String) async throws -> PaymentOutcome { try await inner.status(of: paymentID) }
}

@Suite("Renewals: each period charged once, dunning on the policy's schedule, the entitlement as the records say")
struct RenewalTests {
    static let day: TimeInterval = 86_400

    /// `count` customers with an active monthly subscription whose period began now (written as the owner).
    static func activeSubscriptions(_ env: TestEnvironment, count: Int = 1, method: String = "pm_card_visa")
        async throws -> [UUID]
    {
        var ids: [UUID] = []
        let now = env.clock.now()
        for _ in 0..<count {
            let customer = try await env.customer()
            let id = UUID()
            try await env.asOwner(
                """
                INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method,
                    anchor, current_period_start, current_period_end, created_at, updated_at)
                VALUES ('\(id.text)', '\(customer.id.text)', 'monthly', 999, 'month', 'active', '\(method)',
                    '\(RFC3339DateTranscoder.format(now))', '\(RFC3339DateTranscoder.format(now))',
                    '\(RFC3339DateTranscoder.format(BillingCycle(anchor: now, interval: .month).period(0).upperBound))',
                    now(), now())
                """)
            ids.append(id)
        }
        return ids
    }

    static func renew(_ env: TestEnvironment, _ payments: any PaymentGateway = SimulatedPaymentGateway())
        async throws -> RenewalReport
    {
        try await RenewSubscriptions(payments: payments).run(
            env.database, context: .system("renewals", policies: env.policies), system: true)
    }

    static func state(_ env: TestEnvironment, _ subscription: UUID) async throws -> String? {
        try await env.ownerScalar(
            """
            SELECT s.status || ' '
                || coalesce(string_agg(i.status || ':' || i.attempts, ',' ORDER BY i.period_start), '')
            FROM subscriptions s LEFT JOIN invoices i ON i.subscription_id = s.id
            WHERE s.id = '\(subscription.text)' GROUP BY s.status
            """, as: String.self)
    }

    static func mails(_ env: TestEnvironment) async throws -> String? {
        try await env.ownerScalar("SELECT string_agg(kind, ',' ORDER BY created_at, kind) FROM outbox", as: String.self)
    }

    @Test("a paid period renews once at its end, with a receipt; a second run at once finds nothing due")
    func renewsOnce() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(try await Self.activeSubscriptions(env).first)
            #expect(try await Self.renew(env) == RenewalReport(), "nothing is due before the period ends")
            env.clock.advance(by: 31 * Self.day)
            let report = try await Self.renew(env)
            #expect(report.invoiced == 1 && report.charged == 1 && report.paid == 1, "\(report)")
            #expect(try await Self.renew(env) == RenewalReport())
            #expect(try await Self.state(env, id) == "active paid:1")
            #expect(try await Self.mails(env) == "subscription_receipt")
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'subscriptions.renew'
                        AND target_type = 'subscription' AND target_id = '\(id.text)'
                    """, as: Int.self) == 2, "the renewal invoiced, its verdict")
        }
    }

    @Test(
        """
        dunning: a declined renewal is past_due with access kept, retried after 1, 3, 5 and 7 days with a mail \
        each, then lapses and the entitlement ends
        """)
    func dunning() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(
                try await Self.activeSubscriptions(env, method: SimulatedPaymentGateway.declinedMethod).first)
            let customer = try #require(
                try await env.ownerScalar(
                    "SELECT customer_id FROM subscriptions WHERE id = '\(id.text)'", as: UUID.self))
            let due = BillingCycle(anchor: env.clock.now(), interval: .month).period(0).upperBound
            env.clock.advance(by: due.timeIntervalSince(env.clock.now()))
            #expect(try await Self.renew(env).retrying == 1)
            #expect(try await Self.state(env, id) == "past_due open:1")
            let entitlement = try await env.database.read(
                GetEntitlement(customerID: customer), context: env.context(.appService))
            #expect(entitlement.premium && entitlement.reason == .pastDue)
            let graceEnds = try #require(entitlement.until)
            #expect(
                abs(graceEnds.timeIntervalSince(due.addingTimeInterval(7 * Self.day))) < 0.01,
                "the grace ends at the last retry")
            var elapsed = 0.0
            for (attempt, day) in [1.0, 3, 5, 7].enumerated() {
                env.clock.advance(by: (day - elapsed) * Self.day - 1)
                #expect(try await Self.renew(env) == RenewalReport(), "not yet due on day \(day)")
                env.clock.advance(by: 1)
                elapsed = day
                let report = try await Self.renew(env)
                #expect(attempt < 3 ? report.retrying == 1 : report.lapsed == 1, "day \(day): \(report)")
            }
            #expect(try await Self.state(env, id) == "lapsed failed:5")
            let after = try await env.database.read(
                GetEntitlement(customerID: customer), context: env.context(.appService))
            #expect(!after.premium && after.reason == .lapsed && after.until == nil)
            #expect(
                try await Self.mails(env)
                    == Array(repeating: "subscription_payment_failed", count: 4).joined(separator: ",")
                    + ",subscription_lapsed")
        }
    }

    @Test("a retry paid after the payment method changed: active again, the invoice paid at its second attempt")
    func recovers() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(
                try await Self.activeSubscriptions(env, method: SimulatedPaymentGateway.declinedMethod).first)
            env.clock.advance(by: 31 * Self.day)
            #expect(try await Self.renew(env).retrying == 1)
            try await env.asOwner("UPDATE subscriptions SET payment_method = 'pm_card_visa' WHERE id = '\(id.text)'")
            env.clock.advance(by: Self.day)
            #expect(try await Self.renew(env).paid == 1)
            #expect(try await Self.state(env, id) == "active paid:2")
            #expect(
                try await env.ownerScalar(
                    "SELECT grace_ends_at IS NULL FROM subscriptions WHERE id = '\(id.text)'", as: Bool.self) == true)
        }
    }

    @Test("30 renewal runs at once over two connection pools: every due subscription invoiced and charged once")
    func concurrentRuns() async throws {
        try await TestEnvironment.with { env in
            let ids = try await Self.activeSubscriptions(env, count: 40)
            env.clock.advance(by: 31 * Self.day)
            let gateway = CountingGateway()
            // 90 workers share two pools' connections: on a loaded machine a lease can wait longer than
            // the service's 5 s, which is not what this test is about (each charge made once).
            var patient = PoolLimits.forTests
            patient.leaseTimeout = .seconds(120)
            let limits = patient
            try await Database.with(url: env.appURL, logger: testLogger, clock: env.clock, limits: limits) { first in
                try await Database.with(url: env.appURL, logger: testLogger, clock: env.clock, limits: limits) {
                    second in
                    let reports = try await withThrowingTaskGroup(of: RenewalReport.self) { group in
                        for run in 0..<30 {
                            group.addTask {
                                try await RenewSubscriptions(payments: gateway, batchSize: 7, concurrency: 3).run(
                                    run % 2 == 0 ? first : second,
                                    context: .system("renewals-\(run)", policies: env.policies), system: true)
                            }
                        }
                        return try await group.reduce(into: [RenewalReport]()) { $0.append($1) }
                    }
                    #expect(reports.map(\.invoiced).reduce(0, +) == 40, "\(reports)")
                    #expect(reports.map(\.paid).reduce(0, +) == 40, "\(reports)")
                }
            }
            #expect(gateway.charges.count == 40 && gateway.charges.values.allSatisfy { $0 == 1 }, "\(gateway.charges)")
            for id in ids { #expect(try await Self.state(env, id) == "active paid:1") }
        }
    }

    @Test("a charge that timed out but was made: the run after the claim lapses asks the provider, never charges again")
    func unknownOutcome() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(try await Self.activeSubscriptions(env).first)
            env.clock.advance(by: 31 * Self.day)
            let gateway = CountingGateway(losingAnswers: 1)
            #expect(try await Self.renew(env, gateway).unknown == 1)
            #expect(try await Self.state(env, id) == "active open:1")
            #expect(try await Self.renew(env, gateway) == RenewalReport(), "claimed: no other run takes it yet")
            env.clock.advance(by: 61)
            let report = try await Self.renew(env, gateway)
            #expect(report.paid == 1, "\(report)")
            #expect(try await Self.state(env, id) == "active paid:1")
            #expect(gateway.charges.values.reduce(0, +) == 1, "asked, not charged again: \(gateway.charges)")
        }
    }

    @Test("a trial's end charges its first period; a subscription canceled at period end ends instead of renewing")
    func trialAndEnd() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let customer = try await env.customer()
                let trial = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/subscriptions", token: app,
                    json: SubscribeTests.body(), headers: ["Idempotency-Key": UUID().uuidString])
                let id = try #require(trial["id"].flatMap(UUID.init(uuidString:)))
                let ending = try #require(try await Self.activeSubscriptions(env).first)
                try await env.asOwner(
                    "UPDATE subscriptions SET cancel_at_period_end = true WHERE id = '\(ending.text)'")
                env.clock.advance(by: 7 * Self.day)
                #expect(try await Self.renew(env).paid == 1)
                #expect(try await Self.state(env, id) == "active paid:1")
                env.clock.advance(by: 24 * Self.day)
                #expect(try await Self.renew(env).ended == 1)
                #expect(try await Self.state(env, ending) == "canceled ")
            }
        }
    }
}
