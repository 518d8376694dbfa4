import BackofficePlatform
import Crypto
import Foundation

/// A customer subscribes to a plan (the app's backend), with the provider's token for a saved
/// payment method; in two phases, as checkout is, no transaction open while the provider answers:
/// 1. `reserve`, one transaction: the customer locked (so subscribes for one customer queue), none
///    of their subscriptions live (else 409 `already_subscribed`; the partial unique index holds it
///    too), then either a trial (`trialing`, nothing charged: the policy's days, once per customer)
///    or the subscription `incomplete` with its first invoice `open`;
/// 2. `call`: the invoice charged off session, the provider's key derived from the invoice's id;
/// 3. `record`, a second transaction: charged → invoice `paid`, subscription `active` for its
///    first period (anchored now); declined → invoice `failed`, subscription `canceled` (answered
///    402 with the code). No verdict (503) leaves both as they are: the same request completes it.
package struct Subscribe: StagedOperation {
    package static let action: Action = "subscriptions.create"
    let customerID: UUID
    let planID: String
    let paymentMethod: String
    let payments: any PaymentGateway

    package init(customerID: UUID, planID: String, paymentMethod: String, payments: any PaymentGateway) {
        (self.customerID, self.planID, self.paymentMethod, self.payments) = (
            customerID, planID, paymentMethod, payments
        )
    }

    /// What the first charge needs, kept until its verdict is recorded (no secret: the method's
    /// token is the provider's reference, not card data).
    package struct Reservation: Codable, Sendable {
        package let subscriptionID: UUID
        package let invoiceID: UUID
        package let amountCents: Int64
        package let providerKey: String
    }

    package func ready() throws {
        try payments.refuseWhileUnavailable()
    }

    /// The subscription after it; `declined` names the provider's reason when its first charge was refused.
    package struct Subscribed: Sendable {
        package let record: SubscriptionRecord
        package let declined: String?
    }

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<Reservation, Subscribed>> {
        let plan = try validatedPlan(unit.policies.billing)
        let earlier = try await lockCustomer(in: unit)
        let subscriptionID = unit.newID()
        let trialDays = earlier == 0 ? unit.policies.billing.trialDays : 0
        let status: SubscriptionRecord.Status = trialDays > 0 ? .trialing : .incomplete
        let trialEnd = unit.now.addingTimeInterval(Double(trialDays) * 86_400)
        let subscription = try await unit.one(
            """
            INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method,
                current_period_start, current_period_end, trial_ends_at, created_at, updated_at)
            VALUES (\(subscriptionID), \(customerID), \(plan.id), \(plan.priceCents), \(plan.interval.rawValue),
                \(status.rawValue), \(paymentMethod), \(trialDays > 0 ? unit.now : nil),
                \(trialDays > 0 ? trialEnd : nil), \(trialDays > 0 ? trialEnd : nil), \(unit.now), \(unit.now))
            RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self, else: DomainError.inconsistent("the new subscription was not returned"))
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "subscription",
            targetID: subscriptionID.text, reason: status == .trialing ? "trial of \(trialDays) days" : nil,
            before: nil, after: try subscription.snapshot)
        if status == .trialing {
            let reward = try await SubscriptionRewards.started(subscription, action: Self.action, in: unit)
            return Audited(.done(Subscribed(record: subscription, declined: nil)), event: event, more: reward)
        }
        let invoiceID = unit.newID()
        let period = BillingCycle(anchor: unit.now, interval: plan.interval).period(0)
        try await unit.execute(
            """
            INSERT INTO invoices (id, subscription_id, customer_id, period_start, period_end, amount_cents, status,
                provider, provider_key, kind, created_at, updated_at)
            VALUES (\(invoiceID), \(subscriptionID), \(customerID), \(period.lowerBound), \(period.upperBound),
                \(plan.priceCents), 'open', \(payments.provider), \("invoice:" + invoiceID.text), 'first', \(unit.now),
                \(unit.now))
            """)
        let reservation = Reservation(
            subscriptionID: subscriptionID, invoiceID: invoiceID, amountCents: plan.priceCents,
            providerKey: InvoiceAttempt.key(invoiceID, 1))
        return Audited(.call(reservation), event: event)
    }

    package func call(_ reservation: Reservation) async throws -> PaymentOutcome {
        try await payments.call {
            try await $0.charge(
                PaymentCharge(
                    amountCents: reservation.amountCents, paymentMethod: paymentMethod,
                    idempotencyKey: reservation.providerKey,
                    reference: InvoiceAttempt.reference(reservation.invoiceID, 1)))
        }
    }

    package func record(_ verdict: PaymentOutcome, for reservation: Reservation, in unit: UnitOfWork) async throws
        -> Audited<Subscribed>
    {
        let before = try await SubscriptionRecord.fetch(reservation.subscriptionID, forUpdate: true, in: unit)
        guard before.status == .incomplete else { return .unchanged(Subscribed(record: before, declined: nil)) }
        let after: SubscriptionRecord
        switch verdict {
        case .succeeded(let paymentID):
            after = try await unit.one(
                """
                WITH paid AS (
                    UPDATE invoices SET status = 'paid', provider_payment_id = \(paymentID), paid_at = \(unit.now),
                        attempts = attempts + 1, updated_at = \(unit.now)
                    WHERE id = \(reservation.invoiceID) RETURNING period_start, period_end
                )
                UPDATE subscriptions s SET status = 'active', anchor = p.period_start,
                    current_period_start = p.period_start, current_period_end = p.period_end,
                    updated_at = \(unit.now), version = s.version + 1
                FROM paid p WHERE s.id = \(reservation.subscriptionID)
                RETURNING \(unescaped: SubscriptionRecord.columns(of: "s"))
                """, as: SubscriptionRecord.self,
                else: DomainError.inconsistent("the paid subscription was not returned"))
        case .declined(let code):
            try await unit.execute(
                """
                UPDATE invoices SET status = 'failed', failure_code = \(code), attempts = attempts + 1,
                    updated_at = \(unit.now)
                WHERE id = \(reservation.invoiceID)
                """)
            after = try await unit.one(
                """
                UPDATE subscriptions SET status = 'canceled', ended_at = \(unit.now), updated_at = \(unit.now),
                    version = version + 1
                WHERE id = \(reservation.subscriptionID) RETURNING \(unescaped: SubscriptionRecord.columns)
                """, as: SubscriptionRecord.self,
                else: DomainError.inconsistent("the declined subscription was not returned"))
        case .pending:
            return .unchanged(Subscribed(record: before, declined: nil))
        }
        let declined: String? = if case .declined(let code) = verdict { code } else { nil }
        let receipt =
            declined == nil
            ? try await BillingMail.queue(
                .subscriptionReceipt, to: customerID, reference: reservation.invoiceID,
                fields: BillingMail.fields(after, invoice: reservation.invoiceID, amountCents: reservation.amountCents),
                in: unit) : []
        let reward =
            declined == nil ? try await SubscriptionRewards.started(after, action: Self.action, in: unit) : []
        return Audited(
            Subscribed(record: after, declined: declined),
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "subscription", targetID: after.id.text,
                reason: "the payment provider's verdict on the first invoice", before: try before.snapshot,
                after: try after.snapshot),
            more: receipt + reward)
    }

    private func validatedPlan(_ billing: BillingPolicy) throws -> BillingPlan {
        var validation = Validation()
        let plan = validation.plan(planID, of: billing)
        validation.paymentMethod(paymentMethod)
        try validation.check()
        guard let plan else { throw DomainError.inconsistent("a validated plan went missing") }
        return plan
    }

    /// Locks the customer (subscribes for one customer run one at a time), refuses one who is not
    /// active or already subscribed, and answers how many subscriptions the customer had before. The
    /// subscriptions are read by a statement after the lock, so they include what the transaction
    /// that held it committed (a statement's view is taken when it starts).
    private func lockCustomer(in unit: UnitOfWork) async throws -> Int {
        try await ActiveCustomer.require(customerID, holding: .update, cannot: "subscribe", in: unit)
        let counts: (earlier: Int64, live: Int64)? = try await unit.first(
            """
            SELECT count(*), count(*) FILTER (WHERE status IN ('incomplete', 'trialing', 'active', 'past_due'))
            FROM subscriptions WHERE customer_id = \(customerID)
            """
        ) { row -> (earlier: Int64, live: Int64) in
            let (earlier, live) = try row.decode((Int64, Int64).self)
            return (earlier, live)
        }
        let (earlier, live) = counts ?? (0, 0)
        guard live == 0 else {
            throw DomainError.conflict(
                code: "already_subscribed", detail: "The customer has a live subscription; change or cancel it.")
        }
        return Int(earlier)
    }
}
