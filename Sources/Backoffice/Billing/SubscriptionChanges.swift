import BackofficePlatform
import Foundation

extension SubscriptionRecord {
    /// Whether it gives or may still give access (its first charge under way included).
    var isLive: Bool { [.incomplete, .trialing, .active, .pastDue].contains(status) }

    /// The audit event of `action` from `before` to this state.
    func event(_ action: Action, from before: SubscriptionRecord, reason: String?) throws -> AuditRecord {
        AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "subscription", targetID: id.text, reason: reason,
            before: try before.snapshot, after: try snapshot)
    }
}

/// The customer cancels at period end through the app (`subscriptions.schedule_cancel`): the
/// subscription stays as it is until its trial or paid period ends, then ends instead of renewing;
/// or takes that back before the period ends (`subscriptions.resume`, `canceling` false): it renews
/// again. Only a trialing or active subscription; asked again, nothing changes.
package struct CancelAtPeriodEnd: AuditedChange {
    let subscriptionID: UUID
    let canceling: Bool
    package init(subscriptionID: UUID, canceling: Bool) {
        (self.subscriptionID, self.canceling) = (subscriptionID, canceling)
    }

    package var permission: Action { canceling ? "subscriptions.schedule_cancel" : "subscriptions.resume" }

    package func perform(in unit: UnitOfWork) async throws -> Audited<SubscriptionRecord> {
        let before = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: true, in: unit)
        guard [.trialing, .active].contains(before.status) else {
            throw DomainError.invalidTransition(
                "Only a trialing or active subscription can be canceled at period end or resumed.",
                current: before.status.rawValue)
        }
        guard before.cancelAtPeriodEnd != canceling else { return .unchanged(before) }
        let after = try await unit.one(
            """
            UPDATE subscriptions SET cancel_at_period_end = \(canceling), updated_at = \(unit.now),
                version = version + 1
            WHERE id = \(subscriptionID) RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self, else: DomainError.inconsistent("the subscription was not returned"))
        return Audited(
            after,
            event: try after.event(permission, from: before, reason: canceling ? "canceled at period end" : "resumed"))
    }
}

/// The app gives a subscription a new payment method (`subscriptions.update_payment_method`); a
/// past-due one's open invoice is tried with it at once, in two phases as a renewal is (claimed, the
/// provider asked with no transaction open, the verdict recorded by `RecordRenewalCharge`, dunning
/// included). Only a subscription that is live; the answer is the subscription after it.
package struct UpdatePaymentMethod: StagedOperation {
    package static let action: Action = "subscriptions.update_payment_method"
    let subscriptionID: UUID
    let paymentMethod: String
    let payments: any PaymentGateway

    package init(subscriptionID: UUID, paymentMethod: String, payments: any PaymentGateway) {
        (self.subscriptionID, self.paymentMethod, self.payments) = (subscriptionID, paymentMethod, payments)
    }

    package func ready() throws {}

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<ClaimedInvoice, SubscriptionRecord>> {
        var validation = Validation()
        validation.paymentMethod(paymentMethod)
        try validation.check()
        let before = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: true, in: unit)
        guard [.trialing, .active, .pastDue].contains(before.status) else {
            throw DomainError.invalidTransition(
                "Only a trialing, active or past-due subscription takes a new payment method.",
                current: before.status.rawValue)
        }
        let after = try await unit.one(
            """
            UPDATE subscriptions SET payment_method = \(paymentMethod), updated_at = \(unit.now), version = version + 1
            WHERE id = \(subscriptionID) RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self, else: DomainError.inconsistent("the subscription was not returned"))
        let event = try after.event(Self.action, from: before, reason: "new payment method")
        guard before.status == .pastDue else { return Audited(.done(after), event: event) }
        try await unit.execute(
            """
            UPDATE invoices SET next_attempt_at = \(unit.now)
            WHERE subscription_id = \(subscriptionID) AND status = 'open' AND NOT charging
            """)
        let claimed = try await ClaimedInvoice.claim(
            limit: 1, lease: payments.claimLease, of: subscriptionID, in: unit)
        guard let invoice = claimed.first else { return Audited(.done(after), event: event) }
        return Audited(.call(invoice), event: event)
    }

    package func call(_ invoice: ClaimedInvoice) async throws -> PaymentOutcome {
        try await invoice.attempt(with: payments)
    }

    package func record(_ verdict: PaymentOutcome, for invoice: ClaimedInvoice, in unit: UnitOfWork) async throws
        -> Audited<SubscriptionRecord>
    {
        let recorded = try await RecordRenewalCharge(invoice: invoice, verdict: verdict).perform(in: unit)
        let after = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: false, in: unit)
        guard let first = recorded.events.first else { return .unchanged(after) }
        return Audited(after, event: first, more: Array(recorded.events.dropFirst()))
    }
}
