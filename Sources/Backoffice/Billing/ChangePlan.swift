import BackofficePlatform
import Foundation

/// The customer changes plan through the app (`subscriptions.change_plan`), monthly ↔ annual:
/// - on a trial: the plan is switched, nothing charged (the trial's end bills the new plan);
/// - active: a new period of the new plan starts now (anchored now). The unused part of the current
///   period's price (`Proration.unused`) is a credit against the new price, and so is any credit
///   left from before; what is still due is charged at once off session (two phases, as
///   subscribing: a `plan_change` invoice open, the provider asked with no transaction open, the
///   verdict recorded), and the plan changes only once it is paid (declined: 402 with the code, the
///   subscription as it was). A credit larger than the new price is kept (`credit_cents`) and taken
///   off the invoices that follow; the change is then made at once with a paid invoice of 0.
/// Past-due, ended or incomplete subscriptions are 409; the same plan changes nothing.
package struct ChangePlan: StagedOperation {
    package static let action: Action = "subscriptions.change_plan"
    let subscriptionID: UUID
    let planID: String
    let payments: any PaymentGateway

    /// The new period's invoice to charge, and the credit it uses (taken once it is paid).
    package struct Reservation: Codable, Sendable {
        let invoice: ClaimedInvoice
        let period: Range<Date>
        let creditUsed: Int64
        let version: Int64
    }

    package func ready() throws {}

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<Reservation, Subscribe.Subscribed>> {
        let plan = try validatedPlan(unit.policies.billing)
        let before = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: true, in: unit)
        guard [.trialing, .active].contains(before.status) else {
            throw DomainError.invalidTransition(
                "Only a trialing or active subscription changes plan.", current: before.status.rawValue)
        }
        guard before.plan != plan.id else { return .unchanged(.done(.init(record: before, declined: nil))) }
        guard before.status == .active, let current = before.currentPeriod else {
            let after = try await switchPlan(plan, credit: before.creditCents, period: nil, in: unit)
            return Audited(
                .done(.init(record: after, declined: nil)),
                event: try after.event(Self.action, from: before, reason: "plan \(plan.id)"))
        }
        let unused = Proration.unused(before.priceCents, of: current, at: unit.now)
        let due = plan.priceCents - unused
        let creditUsed = min(before.creditCents, max(due, 0))
        let amount = max(due, 0) - creditUsed
        let period = BillingCycle(anchor: unit.now, interval: plan.interval).period(0)
        let invoiceID = unit.newID()
        try await unit.execute(
            """
            INSERT INTO invoices (id, subscription_id, customer_id, period_start, period_end, amount_cents, status,
                provider, provider_key, kind, credit_applied_cents, paid_at, created_at, updated_at)
            VALUES (\(invoiceID), \(before.id), \(before.customerID), \(period.lowerBound), \(period.upperBound),
                \(amount), \(amount == 0 ? "paid" : "open"), \(payments.provider), \("invoice:" + invoiceID.text),
                'plan_change', \(creditUsed), \(amount == 0 ? unit.now : nil), \(unit.now), \(unit.now))
            """)
        let reason = "plan \(plan.id): \(plan.priceCents) less \(unused) unused and \(creditUsed) credit"
        if amount == 0 {
            let credit = before.creditCents - creditUsed + max(-due, 0)
            let after = try await switchPlan(plan, credit: credit, period: period, in: unit)
            return Audited(
                .done(.init(record: after, declined: nil)),
                event: try after.event(Self.action, from: before, reason: reason))
        }
        try await unit.execute("UPDATE invoices SET attempts = 1, charging = true WHERE id = \(invoiceID)")
        let invoice = ClaimedInvoice(
            id: invoiceID, subscriptionID: before.id, amountCents: amount,
            paymentMethod: try await paymentMethod(in: unit), attempt: 1, askFirst: false)
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "subscription", targetID: before.id.text,
            reason: reason + ": \(amount) to charge", before: try before.snapshot, after: nil)
        return Audited(
            .call(Reservation(invoice: invoice, period: period, creditUsed: creditUsed, version: before.version)),
            event: event)
    }

    package func call(_ reservation: Reservation) async throws -> PaymentOutcome {
        try await reservation.invoice.attempt(with: payments)
    }

    package func record(_ verdict: PaymentOutcome, for reservation: Reservation, in unit: UnitOfWork) async throws
        -> Audited<Subscribe.Subscribed>
    {
        let before = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: true, in: unit)
        let open = try await unit.first(
            "SELECT 1 FROM invoices WHERE id = \(reservation.invoice.id) AND status = 'open' FOR UPDATE", { _ in true })
        guard open == true else { return .unchanged(.init(record: before, declined: nil)) }
        let plan = try validatedPlan(unit.policies.billing)
        switch verdict {
        case .pending:
            return .unchanged(.init(record: before, declined: nil))
        case .declined(let code):
            try await unit.execute(
                """
                UPDATE invoices SET status = 'failed', failure_code = \(code), charging = false,
                    updated_at = \(unit.now)
                WHERE id = \(reservation.invoice.id)
                """)
            return Audited(
                .init(record: before, declined: code),
                event: AuditRecord(
                    action: Self.action, tenantID: platformTenantID, targetType: "subscription",
                    targetID: before.id.text, reason: "plan \(plan.id) declined (\(code)): unchanged",
                    before: try before.snapshot, after: try before.snapshot))
        case .succeeded(let paymentID):
            try await unit.execute(
                """
                UPDATE invoices SET status = 'paid', provider_payment_id = \(paymentID), paid_at = \(unit.now),
                    charging = false, updated_at = \(unit.now)
                WHERE id = \(reservation.invoice.id)
                """)
            let after = try await switchPlan(
                plan, credit: before.creditCents - reservation.creditUsed, period: reservation.period, in: unit)
            let receipt = try await BillingMail.queue(
                .subscriptionReceipt, to: after.customerID, reference: reservation.invoice.id,
                fields: BillingMail.fields(
                    after, invoice: reservation.invoice.id, amountCents: reservation.invoice.amountCents), in: unit)
            return Audited(
                .init(record: after, declined: nil),
                event: try after.event(Self.action, from: before, reason: "plan \(plan.id) paid"), more: receipt)
        }
    }

    /// The subscription on `plan` (its price and interval), with `credit` left, and a new period anchored
    /// at its start when one is given.
    private func switchPlan(_ plan: BillingPlan, credit: Int64, period: Range<Date>?, in unit: UnitOfWork)
        async throws -> SubscriptionRecord
    {
        try await unit.one(
            """
            UPDATE subscriptions SET plan = \(plan.id), price_cents = \(plan.priceCents),
                billing_interval = \(plan.interval.rawValue), credit_cents = \(credit),
                next_price_cents = NULL, next_price_from = NULL,
                anchor = coalesce(\(period?.lowerBound), anchor),
                current_period_start = coalesce(\(period?.lowerBound), current_period_start),
                current_period_end = coalesce(\(period?.upperBound), current_period_end),
                updated_at = \(unit.now), version = version + 1
            WHERE id = \(subscriptionID) RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self,
            else: DomainError.inconsistent("the changed subscription was not returned"))
    }

    private func paymentMethod(in unit: UnitOfWork) async throws -> String? {
        try await unit.first("SELECT payment_method FROM subscriptions WHERE id = \(subscriptionID)") {
            try $0.decode(String?.self)
        } ?? nil
    }

    private func validatedPlan(_ billing: BillingPolicy) throws -> BillingPlan {
        var validation = Validation()
        let plan = validation.plan(planID, of: billing)
        try validation.check()
        guard let plan else { throw DomainError.inconsistent("a validated plan went missing") }
        return plan
    }
}
