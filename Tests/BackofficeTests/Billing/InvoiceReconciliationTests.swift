import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Reconciliation: the invoices against the provider's own record, differences both ways, listed and audited")
struct InvoiceReconciliationTests {
    static let day: TimeInterval = 86_400

    static func reconcile(_ env: TestEnvironment, _ payments: any PaymentGateway, days: Int? = nil) async throws
        -> BillingReconcileReport
    {
        try await ReconcileInvoices(days: days, payments: payments).run(
            env.database, context: .system("reconciliation", policies: env.policies), system: true)
    }

    /// The differences as `kind` sorted, for comparison.
    static func kinds(_ report: BillingReconcileReport) -> [String] {
        report.differences.map(\.kind.rawValue).sorted()
    }

    @Test("a renewal charged at the provider whose answer was lost is recorded by reconciliation once its claim lapses")
    func unrecordedCharge() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(try await RenewalTests.activeSubscriptions(env).first)
            env.clock.advance(by: 31 * Self.day)
            let record = SimulatedPaymentRecord(clock: env.clock)
            let gateway = CountingGateway(losingAnswers: 1, record: record)
            #expect(try await RenewalTests.renew(env, gateway).unknown == 1)
            let held = try await Self.reconcile(env, gateway)
            #expect(Self.kinds(held) == ["unrecorded_charge"] && held.settled == 0, "a run holds the claim")
            #expect(try await RenewalTests.state(env, id) == "active open:1")
            env.clock.advance(by: 61)
            let settled = try await Self.reconcile(env, gateway)
            #expect(settled.differences.count == 1 && settled.settled == 1, "\(settled.differences)")
            #expect(try await RenewalTests.state(env, id) == "active paid:1")
            #expect(try await RenewalTests.renew(env, gateway) == RenewalReport(), "paid: nothing left to charge")
            #expect(gateway.charges.values.reduce(0, +) == 1, "never charged again: \(gateway.charges)")
            #expect(try await Self.reconcile(env, gateway).differences.isEmpty)
            let events = try await env.ownerScalar(
                """
                SELECT string_agg(action || ':' || target_type, ',' ORDER BY id) FROM audit_events
                WHERE action = 'billing.reconcile'
                """, as: String.self)
            #expect(
                events == "billing.reconcile:invoices,billing.reconcile:invoice,billing.reconcile:invoices"
                    + ",billing.reconcile:invoices")
        }
    }

    @Test("differences both ways: a payment missing, one twice, an amount and a refund that differ, an unknown invoice")
    func differences() async throws {
        try await TestEnvironment.with { env in
            let ids = try await RenewalTests.activeSubscriptions(env, count: 4)
            env.clock.advance(by: 31 * Self.day)
            let gateway = SimulatedPaymentGateway(record: SimulatedPaymentRecord(clock: env.clock))
            #expect(try await RenewalTests.renew(env, gateway).paid == 4)
            #expect(try await Self.reconcile(env, gateway).differences.isEmpty, "all as the provider says")
            func invoice(_ index: Int) async throws -> String {
                try #require(
                    try await env.ownerScalar(
                        "SELECT id::text FROM invoices WHERE subscription_id = '\(ids[index].text)'", as: String.self))
            }
            let (refunded, elsewhere, amount) = (try await invoice(0), try await invoice(1), try await invoice(2))
            try await env.asOwner("UPDATE invoices SET refunded_cents = 100 WHERE id = '\(refunded)'")
            try await env.asOwner("UPDATE invoices SET provider_payment_id = 'pi_elsewhere' WHERE id = '\(elsewhere)'")
            try await env.asOwner("UPDATE invoices SET amount_cents = 1000 WHERE id = '\(amount)'")
            let stranger = UUID().text
            _ = try await gateway.charge(
                PaymentCharge(
                    amountCents: 500, paymentMethod: "pm_card_visa", idempotencyKey: "stranger",
                    reference: stranger + ":1"))
            _ = try await gateway.charge(
                PaymentCharge(
                    amountCents: 700, paymentMethod: "pm_card_visa", idempotencyKey: "checkout", reference: stranger))
            let report = try await Self.reconcile(env, gateway)
            #expect(report.invoices == 4 && report.providerCharges == 6, "\(report)")
            let found = Set(report.differences.map { "\($0.kind.rawValue) \($0.invoiceID?.text ?? "-")" })
            #expect(
                found == [
                    "refund_mismatch \(refunded)", "missing_charge \(elsewhere)", "duplicate_charge \(elsewhere)",
                    "amount_mismatch \(amount)", "unknown_invoice -",
                ], "\(found)")
            #expect(report.settled == 0, "a person decides")
            let audited = try await env.ownerScalar(
                """
                SELECT after->>'difference_count' FROM audit_events WHERE action = 'billing.reconcile'
                ORDER BY id DESC LIMIT 1
                """, as: String.self)
            #expect(audited == "5")
        }
    }

    @Test("a window out of range is 422 and changes nothing; a manager's run answers the report")
    func api() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let gateway = SimulatedPaymentGateway(record: SimulatedPaymentRecord(clock: env.clock))
            try await env.withApp(payments: gateway) { client in
                let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                for days in [0, 36, -1] {
                    let reply = try await client.call(
                        .post, "/v1/billing/reconciliations", token: manager, json: #"{"days": \#(days)}"#)
                    #expect(reply.status == 422 && reply.text.contains("days"), "\(days): \(reply.text)")
                }
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events)
                let reply = try await client.call(
                    .post, "/v1/billing/reconciliations", token: manager, json: #"{"days": 7}"#)
                #expect(reply.status == 200 && reply.text.contains(#""differences":[]"#), "\(reply.text)")
                let app = env.fixture.tokens[.appService]!
                #expect(
                    try await client.call(.post, "/v1/billing/reconciliations", token: app, json: "{}").status == 403)
            }
        }
    }
}
