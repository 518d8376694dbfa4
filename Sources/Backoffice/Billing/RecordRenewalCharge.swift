import BackofficePlatform
import Foundation

/// What a renewal charge's verdict did to its subscription.
package enum RenewalVerdict: Sendable, Equatable {
    /// Paid: the subscription is active for its period.
    case paid
    /// Declined: past_due, tried again at the date (dunning).
    case retrying(at: Date)
    /// The last retry declined: the subscription lapsed.
    case lapsed
    /// Nothing recorded: no verdict yet (pending at the provider), or the claim was taken over.
    case unchanged
}

/// A renewal charge's verdict recorded (`subscriptions.renew`) in a transaction of its own, under the
/// subscription's and then the invoice's row locks (the order every change of a subscription takes,
/// so a cancellation voiding the invoice waits or is waited for, never deadlocks with it), only if
/// the invoice is still as the claim left it (open, its charge under way, the same attempt): a late
/// verdict for a claim that lapsed and was taken over by another run changes nothing.
/// - paid: the invoice `paid`, the subscription `active`; the receipt mailed;
/// - declined with retries left: the invoice stays open, due again on the policy's schedule (days
///   after its period began); the subscription `past_due`, access kept until the last retry; a mail;
/// - declined at the last retry: the invoice `failed`, the subscription `lapsed`; a mail.
struct RecordRenewalCharge: AuditedOperation {
    static let action: Action = "subscriptions.renew"
    let invoice: ClaimedInvoice
    let verdict: PaymentOutcome

    func perform(in unit: UnitOfWork) async throws -> Audited<RenewalVerdict> {
        let before = try await SubscriptionRecord.fetch(invoice.subscriptionID, forUpdate: true, in: unit)
        let current: (status: String, charging: Bool, attempts: Int32, periodStart: Date)? = try await unit.first(
            "SELECT status, charging, attempts, period_start FROM invoices WHERE id = \(invoice.id) FOR UPDATE"
        ) { row in
            let (status, charging, attempts, periodStart) = try row.decode((String, Bool, Int32, Date).self)
            return (status, charging, attempts, periodStart)
        }
        guard let current, current.status == "open", current.charging, Int(current.attempts) == invoice.attempt
        else { return .unchanged(.unchanged) }
        let schedule = unit.policies.billing.retryAfterDays
        var change = Change(outcome: .paid, invoiceStatus: "open", subscriptionStatus: before.status.rawValue)
        switch verdict {
        case .pending:
            return .unchanged(.unchanged)
        case .succeeded(let paymentID):
            (change.invoiceStatus, change.paymentID, change.subscriptionStatus) = ("paid", paymentID, "active")
        case .declined(let code) where invoice.attempt <= schedule.count:
            let day = { (days: Int) in current.periodStart.addingTimeInterval(Double(days) * 86_400) }
            let retry = max(unit.now, day(schedule[invoice.attempt - 1]))
            (change.outcome, change.failureCode, change.nextAttempt) = (.retrying(at: retry), code, retry)
            (change.subscriptionStatus, change.graceEnds) = ("past_due", day(schedule.last ?? 0))
        case .declined(let code):
            (change.outcome, change.invoiceStatus, change.failureCode) = (.lapsed, "failed", code)
            (change.subscriptionStatus, change.ended) = ("lapsed", unit.now)
        }
        try await unit.execute(
            """
            UPDATE invoices SET status = \(change.invoiceStatus),
                provider_payment_id = coalesce(\(change.paymentID), provider_payment_id),
                paid_at = \(change.paymentID == nil ? nil : unit.now),
                failure_code = coalesce(\(change.failureCode), failure_code), charging = false, claimed_until = NULL,
                next_attempt_at = \(change.nextAttempt), updated_at = \(unit.now)
            WHERE id = \(invoice.id)
            """)
        let after = try await unit.one(
            """
            UPDATE subscriptions SET status = \(change.subscriptionStatus), grace_ends_at = \(change.graceEnds),
                ended_at = \(change.ended), updated_at = \(unit.now), version = version + 1
            WHERE id = \(before.id) RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self,
            else: DomainError.inconsistent("the renewed subscription was not returned"))
        let outcome = change.outcome
        var more = try await mail(outcome, after: after, in: unit)
        if outcome == .paid && before.status != .trialing {
            more += try await SubscriptionRewards.renewed(after, invoice: invoice.id, action: Self.action, in: unit)
        }
        return Audited(
            outcome,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "subscription", targetID: after.id.text,
                reason: "invoice \(invoice.id.text), attempt \(invoice.attempt): \(Self.describe(verdict))",
                before: try before.snapshot, after: try after.snapshot),
            more: more)
    }

    /// What the verdict writes.
    private struct Change {
        var outcome: RenewalVerdict
        var invoiceStatus: String
        var subscriptionStatus: String
        var paymentID: String? = nil
        var failureCode: String? = nil
        var nextAttempt: Date? = nil
        var graceEnds: Date? = nil
        var ended: Date? = nil
    }

    private func mail(_ outcome: RenewalVerdict, after: SubscriptionRecord, in unit: UnitOfWork) async throws
        -> [AuditRecord]
    {
        var fields = BillingMail.fields(after, invoice: invoice.id, amountCents: invoice.amountCents)
        let kind: QueuedMail.Kind
        switch outcome {
        case .paid: kind = .subscriptionReceipt
        case .retrying(let at):
            kind = .subscriptionPaymentFailed
            fields["next_attempt"] = UTCDay(at).description
            fields["grace_ends"] = after.graceEndsAt.map { UTCDay($0).description }
            if case .declined(let code) = verdict { fields["code"] = code }
        case .lapsed: kind = .subscriptionLapsed
        case .unchanged: return []
        }
        return try await BillingMail.queue(kind, to: after.customerID, reference: invoice.id, fields: fields, in: unit)
    }

    static func describe(_ verdict: PaymentOutcome) -> String {
        switch verdict {
        case .succeeded: "paid"
        case .declined(let code): "declined (\(code))"
        case .pending: "pending"
        }
    }
}
