import BackofficePlatform
import Foundation
import PostgresNIO

/// A refund of a subscription invoice, as recorded (table `invoice_refunds`).
package struct InvoiceRefund: Sendable, Equatable, RowDecodable {
    package enum Status: String, Sendable, CaseIterable { case pending, succeeded, failed }
    package let id: UUID
    package let invoiceID: UUID
    package let amountCents: Int64
    package let reason: String
    package let status: Status
    package let failureCode: String?
    package let createdAt: Date
    package let decidedAt: Date?

    package static let columns = "id, invoice_id, amount_cents, reason, status, failure_code, created_at, decided_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, Int64, String, String, String?, Date, Date?).self)
        (id, invoiceID, amountCents, reason, status) = (c.0, c.1, c.2, c.3, try Status(known: c.4))
        (failureCode, createdAt, decidedAt) = (c.5, c.6, c.7)
    }

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let invoice_id: String, amount_cents: Int64, status: String, failure_code: String?
            }
            return try AuditRecord.json(
                Snapshot(
                    invoice_id: invoiceID.text, amount_cents: amountCents, status: status.rawValue,
                    failure_code: failureCode))
        }
    }
}

/// A refund under way: what the provider is asked (no secret), kept until its verdict is recorded.
package struct RefundReservation: Codable, Sendable {
    package let refundID: UUID
    package let invoiceID: UUID
    package let paymentID: String
    package let amountCents: Int64
    /// What the provider is asked.
    var refund: ProviderRefund {
        ProviderRefund(refundID: refundID, providerPaymentID: paymentID, amountCents: amountCents)
    }
}

/// Refunds of paid invoices in two phases, whoever asks (a manager's refund, a cancellation with a
/// refund): reserved under the invoice's row lock, never more than what was paid less what was
/// refunded or is being refunded (so refunds at once queue on the lock and their sum holds; a CHECK
/// keeps refunded_cents at most the amount too); the provider asked under `refund:<id>` with no
/// transaction open; its verdict recorded under the invoice's lock again. Each step is audited.
enum InvoiceRefunds {
    /// A refund of `amount` cents of `invoice` (nil: all that is left) reserved; refused with 409
    /// when the invoice is not paid, 422 `exceeds_refundable` when more is asked than is left.
    static func reserve(
        _ invoice: UUID, amount: Int64?, reason: String, action: Action, in unit: UnitOfWork
    ) async throws -> (RefundReservation, AuditRecord) {
        typealias Paid = (status: String, amount: Int64, refunded: Int64, payment: String?, customer: UUID)
        let paid: Paid? = try await unit.first(
            """
            SELECT status, amount_cents, refunded_cents, provider_payment_id, customer_id
            FROM invoices WHERE id = \(invoice) FOR UPDATE
            """
        ) { row -> Paid in
            let c = try row.decode((String, Int64, Int64, String?, UUID).self)
            return (c.0, c.1, c.2, c.3, c.4)
        }
        guard let paid else { throw DomainError.notFound("Invoice \(invoice.text)") }
        guard paid.status == "paid", let payment = paid.payment else {
            throw DomainError.invalidTransition("Only a paid invoice can be refunded.", current: paid.status)
        }
        // Read by a statement after the lock, so it sees the refunds the lock's last holder committed
        // (a statement's snapshot is taken when it starts: a subquery of the locking one was stale).
        let pending =
            try await unit.first(
                """
                SELECT coalesce(sum(amount_cents), 0)::bigint FROM invoice_refunds
                WHERE invoice_id = \(invoice) AND status = 'pending'
                """, { try $0.decode(Int64.self) }) ?? 0
        let refundable = paid.amount - paid.refunded - pending
        let requested = amount ?? refundable
        var validation = Validation()
        validation.text(reason, "reason", max: 500)
        validation.require(
            (1...max(refundable, 1)).contains(requested) && refundable > 0, "amount_cents", "exceeds_refundable",
            "from 1 to the \(refundable) cents left to refund of this invoice")
        try validation.check()
        let refundID = unit.newID()
        let refund = try await unit.one(
            """
            INSERT INTO invoice_refunds (id, invoice_id, customer_id, amount_cents, reason, status, provider_key,
                requested_by, created_at)
            VALUES (\(refundID), \(invoice), \(paid.customer), \(requested), \(reason), 'pending',
                \("refund:" + refundID.text), \(unit.principal.operatorID), \(unit.now))
            RETURNING \(unescaped: InvoiceRefund.columns)
            """, as: InvoiceRefund.self, else: DomainError.inconsistent("the refund was not returned"))
        let reservation = RefundReservation(
            refundID: refundID, invoiceID: invoice, paymentID: payment, amountCents: requested)
        let event = AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "invoice", targetID: invoice.text, reason: reason,
            before: nil, after: try refund.snapshot)
        return (reservation, event)
    }

    static func call(_ reservation: RefundReservation, payments: any PaymentGateway) async throws -> PaymentOutcome {
        try await reservation.refund.call(payments)
    }

    /// The provider's verdict on the refund recorded, once: refunded adds it to the invoice's
    /// refunded_cents; declined keeps the code; pending leaves it to be asked again.
    static func record(
        _ verdict: PaymentOutcome, for reservation: RefundReservation, action: Action, in unit: UnitOfWork
    ) async throws -> Audited<InvoiceRefund> {
        try await unit.execute("SELECT 1 FROM invoices WHERE id = \(reservation.invoiceID) FOR UPDATE")
        let before = try await unit.one(
            """
            SELECT \(unescaped: InvoiceRefund.columns) FROM invoice_refunds WHERE id = \(reservation.refundID)
            FOR UPDATE
            """, as: InvoiceRefund.self, else: DomainError.notFound("Refund \(reservation.refundID.text)"))
        guard before.status == .pending else { return .unchanged(before) }
        let (status, providerID, code): (InvoiceRefund.Status, String?, String?)
        switch verdict {
        case .succeeded(let id): (status, providerID, code) = (.succeeded, id, nil)
        case .declined(let failure): (status, providerID, code) = (.failed, nil, failure)
        case .pending: return .unchanged(before)
        }
        let after = try await unit.one(
            """
            UPDATE invoice_refunds SET status = \(status.rawValue), provider_refund_id = \(providerID),
                failure_code = \(code), decided_at = \(unit.now)
            WHERE id = \(reservation.refundID) RETURNING \(unescaped: InvoiceRefund.columns)
            """, as: InvoiceRefund.self, else: DomainError.inconsistent("the decided refund was not returned"))
        if status == .succeeded {
            try await unit.execute(
                """
                UPDATE invoices SET refunded_cents = refunded_cents + \(reservation.amountCents),
                    updated_at = \(unit.now)
                WHERE id = \(reservation.invoiceID)
                """)
        }
        return Audited(
            after,
            event: AuditRecord(
                action: action, tenantID: platformTenantID, targetType: "invoice",
                targetID: reservation.invoiceID.text, reason: "the payment provider's verdict on the refund",
                before: try before.snapshot, after: try after.snapshot))
    }
}

/// A backend manager refunds a paid invoice, whole or in part, with a reason (`invoices.refund`),
/// in two phases (`InvoiceRefunds`). A refund the provider declines is 402 with its code.
package struct RefundInvoice: StagedOperation {
    package static let action: Action = "invoices.refund"
    let invoiceID: UUID
    let amountCents: Int64?
    let reason: String
    let payments: any PaymentGateway

    package init(invoiceID: UUID, amountCents: Int64?, reason: String, payments: any PaymentGateway) {
        (self.invoiceID, self.amountCents, self.reason, self.payments) = (invoiceID, amountCents, reason, payments)
    }

    package func ready() throws {
        try payments.refuseWhileUnavailable()
    }

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<RefundReservation, InvoiceRefund>> {
        let (reservation, event) = try await InvoiceRefunds.reserve(
            invoiceID, amount: amountCents, reason: reason.trimmingCharacters(in: .whitespacesAndNewlines),
            action: Self.action, in: unit)
        return Audited(.call(reservation), event: event)
    }

    package func call(_ reservation: RefundReservation) async throws -> PaymentOutcome {
        try await InvoiceRefunds.call(reservation, payments: payments)
    }

    package func record(_ verdict: PaymentOutcome, for reservation: RefundReservation, in unit: UnitOfWork)
        async throws -> Audited<InvoiceRefund>
    {
        try await InvoiceRefunds.record(verdict, for: reservation, action: Self.action, in: unit)
    }
}
