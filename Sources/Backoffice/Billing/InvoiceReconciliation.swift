import BackofficePlatform
import Foundation
import PostgresNIO

/// A difference between the invoices and the provider's own record of its payments.
package struct BillingDifference: Sendable, Equatable, Encodable {
    package enum Kind: String, Sendable, Encodable {
        /// The provider took money for an invoice the back office does not show paid.
        case unrecordedCharge = "unrecorded_charge"
        /// A second payment for an invoice already paid by another.
        case duplicateCharge = "duplicate_charge"
        /// An invoice shown paid that the provider has no payment for.
        case missingCharge = "missing_charge"
        /// The provider received another amount than the invoice says was paid.
        case amountMismatch = "amount_mismatch"
        /// The provider refunded another amount than the invoice's refunds.
        case refundMismatch = "refund_mismatch"
        /// A payment whose reference names no invoice of ours.
        case unknownInvoice = "unknown_invoice"
    }

    package var kind: Kind
    package var invoiceID: UUID?
    package var providerPaymentID: String?
    /// The invoice's figure (paid or refunded cents), when it has one.
    package var invoiceCents: Int64?
    /// The provider's figure (received or refunded cents), when it has one.
    package var providerCents: Int64?
    /// Reconciliation recorded the provider's payment on its invoice (an unrecorded charge of a
    /// renewal whose claim had lapsed): the difference is gone.
    package var settled = false

    enum CodingKeys: String, CodingKey {
        case kind, settled
        case invoiceID = "invoice_id"
        case providerPaymentID = "provider_payment_id"
        case invoiceCents = "invoice_cents"
        case providerCents = "provider_cents"
    }
}

/// What a reconciliation of the invoices found.
package struct BillingReconcileReport: Sendable {
    /// The start of the window compared (narrowed to what the provider's record covers).
    package var since: Date
    package var invoices = 0
    package var providerCharges = 0
    package var differences: [BillingDifference] = []
    package var settled: Int { differences.count { $0.settled } }
}

/// Reconciles the invoices against the provider's payments (`billing.reconcile`): the payments the
/// provider made in the window (the last `days` days, at most what its record covers) and the
/// invoices they name or that were paid in it, matched by the reference each charge carries
/// (`<invoice>:<attempt>`) and the provider's payment id.
///
/// Every difference is listed and the run is one audit event holding them (the first 100; their
/// count always). One difference is settled, never guessed at: a renewal's payment the provider
/// made but whose verdict was never recorded (its answer lost, its claim lapsed) is recorded on the
/// invoice as the renewal run would have, in a transaction of its own under the subscription's and
/// the invoice's locks, so it is never charged again. Everything else is for a person: a payment
/// twice, a payment missing, amounts or refunds that differ. No transaction is open while the
/// provider is asked.
package struct ReconcileInvoices: Sendable {
    package static let action: Action = "billing.reconcile"
    let days: Int
    let payments: any PaymentGateway

    /// - Throws: 422 naming `days` unless it is from 1 to 35 (default 2).
    package init(days: Int?, payments: any PaymentGateway) throws {
        var validation = Validation()
        validation.require((1...35).contains(days ?? 2), "days", "out_of_range", "must be from 1 to 35")
        try validation.check()
        (self.days, self.payments) = (days ?? 2, payments)
    }

    /// Runs for `context`'s principal (policy checked at each step), or as the system (`system`:
    /// the daily job of `serve`).
    package func run(_ database: Database, context: OperationContext, system: Bool = false) async throws
        -> BillingReconcileReport
    {
        func step<Operation: AuditedOperation>(_ operation: Operation) async throws -> Operation.Output {
            try await database.run(operation, context: context, asSystem: system)
        }
        func read<Q: Query>(_ query: Q) async throws -> Q.Output {
            try await database.read(query, context: context, asSystem: system)
        }
        try payments.refuseWhileUnavailable()
        let window = try await read(PaidInvoices(days: days, provider: payments.provider))
        // an hour more of the provider's payments: one made just before the window, recorded in it, is seen
        let listing = try await payments.call { try await $0.charges(since: window.since.addingTimeInterval(-3_600)) }
        let since = max(window.since, listing.coveredSince ?? window.since)
        let charges = listing.charges.filter(\.succeeded)
        var invoices = window.invoices.filter { ($0.paidAt ?? since) >= since }
        let loaded = Set(invoices.map(\.id))
        let named = Set(charges.compactMap { $0.reference.flatMap(InvoiceReference.init)?.invoice }).subtracting(loaded)
        invoices += try await read(NamedInvoices(ids: Array(named), provider: payments.provider))
        var report = BillingReconcileReport(since: since, invoices: invoices.count, providerCharges: charges.count)
        report.differences = InvoiceMatch(invoices: invoices, charges: charges).differences
        for index in report.differences.indices where report.differences[index].kind == .unrecordedCharge {
            let difference = report.differences[index]
            guard let invoice = difference.invoiceID, let payment = difference.providerPaymentID,
                let attempt = charges.first(where: { $0.id == payment })?.reference.flatMap(InvoiceReference.init)
            else { continue }
            report.differences[index].settled = try await step(
                RecordReconciledCharge(invoiceID: invoice, attempt: attempt.attempt, paymentID: payment))
        }
        _ = try await step(RecordJobSummary(target: payments.provider, summary: InvoicesReconciled(report)))
        return report
    }
}

/// A charge's reference as a renewal gives it: the invoice and the attempt's number.
struct InvoiceReference {
    let invoice: UUID
    let attempt: Int

    init?(_ reference: String) {
        let parts = reference.split(separator: ":")
        guard parts.count == 2, let invoice = UUID(uuidString: String(parts[0])), let attempt = Int(parts[1]),
            attempt > 0
        else { return nil }
        (self.invoice, self.attempt) = (invoice, attempt)
    }
}

/// An invoice as reconciliation compares it: paid when it has a `paidAt` (the table's check holds
/// the two together).
struct ReconciledInvoice: Sendable, RowDecodable {
    let id: UUID
    let amountCents: Int64
    let refundedCents: Int64
    let paymentID: String?
    let paidAt: Date?

    static let columns = "id, amount_cents, refunded_cents, provider_payment_id, paid_at"

    init(row: PostgresRow) throws {
        (id, amountCents, refundedCents, paymentID, paidAt) = try row.decode((UUID, Int64, Int64, String?, Date?).self)
    }
}

/// The window's start (`days` before now) and the provider's invoices paid with money since.
struct PaidInvoices: Query {
    static let action = ReconcileInvoices.action
    let days: Int
    let provider: String

    func read(in unit: UnitOfWork) async throws -> (since: Date, invoices: [ReconciledInvoice]) {
        let since = unit.now.addingTimeInterval(-Double(days) * 86_400)
        let invoices = try await unit.all(
            """
            SELECT \(unescaped: ReconciledInvoice.columns) FROM invoices
            WHERE provider = \(provider) AND paid_at >= \(since) AND amount_cents > 0
            ORDER BY paid_at, id
            """, as: ReconciledInvoice.self)
        return (since, invoices)
    }
}

/// The provider's invoices its payments name.
struct NamedInvoices: Query {
    static let action = ReconcileInvoices.action
    let ids: [UUID]
    let provider: String

    func read(in unit: UnitOfWork) async throws -> [ReconciledInvoice] {
        guard !ids.isEmpty else { return [] }
        return try await unit.all(
            """
            SELECT \(unescaped: ReconciledInvoice.columns) FROM invoices
            WHERE provider = \(provider) AND id = ANY(\(ids))
            """, as: ReconciledInvoice.self)
    }
}

/// The matching itself, with no database and no provider: each payment with the invoice its
/// reference names; each invoice paid with money with its payment.
struct InvoiceMatch {
    let invoices: [ReconciledInvoice]
    let charges: [ProviderCharge]

    var differences: [BillingDifference] {
        let byID = Dictionary(invoices.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var found: [BillingDifference] = []
        var seen = Set<String>()
        for charge in charges {
            seen.insert(charge.id)
            guard let reference = charge.reference.flatMap(InvoiceReference.init) else { continue }
            guard let invoice = byID[reference.invoice] else {
                found.append(
                    .init(kind: .unknownInvoice, providerPaymentID: charge.id, providerCents: charge.amountCents))
                continue
            }
            found += compare(invoice, charge)
        }
        for invoice in invoices where invoice.paidAt != nil && invoice.amountCents > 0 {
            guard let payment = invoice.paymentID, !seen.contains(payment) else { continue }
            found.append(
                .init(
                    kind: .missingCharge, invoiceID: invoice.id, providerPaymentID: payment,
                    invoiceCents: invoice.amountCents))
        }
        return found
    }

    private func compare(_ invoice: ReconciledInvoice, _ charge: ProviderCharge) -> [BillingDifference] {
        func difference(_ kind: BillingDifference.Kind, _ ours: Int64?, _ theirs: Int64?) -> BillingDifference {
            .init(
                kind: kind, invoiceID: invoice.id, providerPaymentID: charge.id, invoiceCents: ours,
                providerCents: theirs)
        }
        guard invoice.paidAt != nil else {
            return [difference(.unrecordedCharge, nil, charge.amountCents)]
        }
        guard invoice.paymentID == charge.id else {
            return [difference(.duplicateCharge, invoice.amountCents, charge.amountCents)]
        }
        var found: [BillingDifference] = []
        if invoice.amountCents != charge.amountCents {
            found.append(difference(.amountMismatch, invoice.amountCents, charge.amountCents))
        }
        if invoice.refundedCents != charge.refundedCents {
            found.append(difference(.refundMismatch, invoice.refundedCents, charge.refundedCents))
        }
        return found
    }
}

/// A renewal's payment the provider made, recorded on its invoice by reconciliation
/// (`billing.reconcile`) when the invoice is still open and no run holds a claim on it: under the
/// subscription's and then the invoice's locks, as the renewal run records a paid charge
/// (`RecordRenewalCharge`, with its event), and one event of its own naming the payment. True when it
/// was recorded.
struct RecordReconciledCharge: AuditedOperation {
    static let action = ReconcileInvoices.action
    let invoiceID: UUID
    let attempt: Int
    let paymentID: String

    func perform(in unit: UnitOfWork) async throws -> Audited<Bool> {
        try await unit.execute(
            """
            SELECT 1 FROM subscriptions WHERE id = (SELECT subscription_id FROM invoices WHERE id = \(invoiceID))
            FOR UPDATE
            """)
        let invoice = try await unit.first(
            """
            UPDATE invoices SET charging = true, attempts = \(Int32(attempt)), updated_at = \(unit.now)
            WHERE id = \(invoiceID) AND status = 'open' AND kind = 'renewal'
                AND (claimed_until IS NULL OR claimed_until <= \(unit.now))
            RETURNING id, subscription_id, amount_cents
            """
        ) { row in
            let (id, subscription, cents) = try row.decode((UUID, UUID, Int64).self)
            return ClaimedInvoice(
                id: id, subscriptionID: subscription, amountCents: cents, paymentMethod: nil, attempt: attempt,
                askFirst: true)
        }
        guard let invoice else { return .unchanged(false) }
        let recorded = try await RecordRenewalCharge(invoice: invoice, verdict: .succeeded(id: paymentID)).perform(
            in: unit)
        guard recorded.output == .paid else { throw DomainError.inconsistent("the reconciled charge was not recorded") }
        struct Payment: Encodable { let provider_payment_id: String, attempt: Int, status: String }
        return Audited(
            true,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "invoice", targetID: invoiceID.text,
                reason: "the provider's payment, found by reconciliation", before: nil,
                after: try AuditRecord.json(Payment(provider_payment_id: paymentID, attempt: attempt, status: "paid"))),
            more: recorded.events)
    }
}

/// An invoice reconciliation's figures and the differences it found (the first 100), as its run's
/// audit event holds them.
struct InvoicesReconciled: JobSummary {
    static let action = ReconcileInvoices.action
    static let targetType = "invoices"
    let since: Date, invoices: Int, provider_charges: Int, settled: Int, difference_count: Int
    let differences: [BillingDifference]

    init(_ report: BillingReconcileReport) {
        (since, invoices, provider_charges) = (report.since, report.invoices, report.providerCharges)
        (settled, difference_count) = (report.settled, report.differences.count)
        differences = Array(report.differences.prefix(100))
    }
}
