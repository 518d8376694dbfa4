import BackofficePlatform
import Foundation
import PostgresNIO

/// One charge attempt of an invoice at the provider: its idempotency key and reference are derived
/// from the invoice and the attempt's number, so an attempt asked twice is one charge at the
/// provider, and each retry of the dunning schedule is a charge of its own.
package enum InvoiceAttempt {
    package static func key(_ invoice: UUID, _ attempt: Int) -> String { "invoice:\(invoice.text):\(attempt)" }
    package static func reference(_ invoice: UUID, _ attempt: Int) -> String { "\(invoice.text):\(attempt)" }
}

/// An invoice a renewal run claimed to charge.
package struct ClaimedInvoice: Sendable, Codable, RowDecodable {
    package let id: UUID
    package let subscriptionID: UUID
    package let amountCents: Int64
    /// The provider's token of the method to charge; nil when none is on file (a subscription
    /// migrated from the app's flag): declined `no_payment_method` without asking the provider.
    package let paymentMethod: String?
    /// The attempt's number (1: the renewal itself; then the retries).
    package let attempt: Int
    /// This attempt was started by a run that never recorded its verdict (a crash, a timeout): the
    /// provider is asked what became of it before anything is charged.
    package let askFirst: Bool

    /// As the claim returns it (`due`: the claim's row lock, `s`: the subscription).
    package static let columns = "i.id, i.subscription_id, i.amount_cents, s.payment_method, i.attempts, due.charging"

    init(
        id: UUID, subscriptionID: UUID, amountCents: Int64, paymentMethod: String?, attempt: Int, askFirst: Bool
    ) {
        (self.id, self.subscriptionID, self.amountCents) = (id, subscriptionID, amountCents)
        (self.paymentMethod, self.attempt, self.askFirst) = (paymentMethod, attempt, askFirst)
    }

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, Int64, String?, Int32, Bool).self)
        (id, subscriptionID, amountCents, paymentMethod, attempt, askFirst) = (c.0, c.1, c.2, c.3, Int(c.4), c.5)
    }

    var reference: String { InvoiceAttempt.reference(id, attempt) }

    /// The attempt made at the provider: asked about first when an earlier run started it; declined
    /// `no_payment_method` without asking when none is on file. No verdict throws `PaymentRefusal`.
    func attempt(with payments: any PaymentGateway) async throws -> PaymentOutcome {
        try await payments.call { gateway in
            if askFirst, let made = try await gateway.find(reference: reference) { return made }
            guard let charge else { return .declined(code: "no_payment_method") }
            return try await gateway.charge(charge)
        }
    }

    /// The charge to ask of the provider; nil without a payment method.
    var charge: PaymentCharge? {
        paymentMethod.map {
            PaymentCharge(
                amountCents: amountCents, paymentMethod: $0, idempotencyKey: InvoiceAttempt.key(id, attempt),
                reference: reference)
        }
    }
}

/// What one batch of a renewal run opened, ended and claimed.
package struct RenewalBatch: Sendable {
    package var opened = 0
    package var ended = 0
    package var claimed: [ClaimedInvoice] = []
}

/// A renewal run's first step (`subscriptions.renew`), one transaction:
/// 1. the subscriptions whose trial or paid period has ended, at most `limit`, locked with SKIP
///    LOCKED (a run in another process takes others): each moves into its next period with that
///    period's invoice `open` and due now (an invoice is unique per subscription and period, so
///    the same renewal is never invoiced twice), or ends, when its customer canceled at period end;
/// 2. the open invoices due a charge (renewals, and retries on the dunning schedule; none of a
///    deleted account), at most `limit`, also with SKIP LOCKED, claimed for `lease`: no other run
///    charges them meanwhile.
/// Each renewal and each end is an audit event; the claims are one more.
struct OpenRenewals: AuditedOperation {
    static let action: Action = "subscriptions.renew"
    let limit: Int
    let lease: Duration
    let provider: String

    func perform(in unit: UnitOfWork) async throws -> Audited<RenewalBatch> {
        let due = try await unit.all(
            """
            SELECT \(unescaped: SubscriptionRecord.columns) FROM subscriptions
            WHERE status IN ('active', 'trialing') AND current_period_end <= \(unit.now)
            ORDER BY current_period_end, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            """, as: SubscriptionRecord.self)
        var batch = RenewalBatch()
        var events: [AuditRecord] = []
        let noticed = try await noticedPrices(of: due.map(\.id), in: unit)
        let gone = try await deletedAccounts(of: due.map(\.customerID), in: unit)
        for subscription in due {
            guard let period = subscription.currentPeriod else { continue }
            if subscription.cancelAtPeriodEnd || gone.contains(subscription.customerID) {
                let why = subscription.cancelAtPeriodEnd ? "canceled at period end" : "the account was deleted"
                events.append(try await end(subscription, at: period.upperBound, why: why, in: unit))
                batch.ended += 1
            } else {
                events.append(
                    try await renew(subscription, after: period, noticed: noticed[subscription.id], in: unit))
                batch.opened += 1
            }
        }
        batch.claimed = try await ClaimedInvoice.claim(limit: limit, lease: lease, in: unit)
        if !batch.claimed.isEmpty {
            struct Claims: Encodable { let invoices: [String], attempts: [Int], until: Date }
            events.append(
                AuditRecord(
                    action: Self.action, tenantID: platformTenantID, targetType: "invoices",
                    targetID: "\(batch.claimed.count)", reason: "claimed for charging", before: nil,
                    after: try AuditRecord.json(
                        Claims(
                            invoices: batch.claimed.map(\.id.text), attempts: batch.claimed.map(\.attempt),
                            until: unit.now.addingTimeInterval(lease.inSeconds)))))
        }
        guard let first = events.first else { return .unchanged(batch) }
        return Audited(batch, event: first, more: Array(events.dropFirst()))
    }

    /// The subscription moved into its next period (a trial's first paid period is anchored where
    /// the trial ends), and that period's invoice opened, due now.
    private func renew(
        _ before: SubscriptionRecord, after period: Range<Date>, noticed: NoticedPrice?, in unit: UnitOfWork
    ) async throws -> AuditRecord {
        let anchor = before.status == .trialing ? period.upperBound : before.anchor ?? period.lowerBound
        let next = BillingCycle(anchor: anchor, interval: before.interval).period(startingAtOrAfter: period.upperBound)
        // the price noticed to the customer once its date has come, else the subscription's own
        let price =
            if let noticed, noticed.from <= next.lowerBound { (cents: noticed.cents, noticed: true) } else {
                (cents: before.priceCents, noticed: false)
            }
        let credit = min(before.creditCents, price.cents)
        let amount = price.cents - credit
        let invoiceID = unit.newID()
        try await unit.execute(
            """
            INSERT INTO invoices (id, subscription_id, customer_id, period_start, period_end, amount_cents, status,
                provider, provider_key, next_attempt_at, paid_at, credit_applied_cents, created_at, updated_at)
            VALUES (\(invoiceID), \(before.id), \(before.customerID), \(next.lowerBound), \(next.upperBound),
                \(amount), \(amount == 0 ? "paid" : "open"), \(provider), \("invoice:" + invoiceID.text),
                \(amount == 0 ? nil : unit.now), \(amount == 0 ? unit.now : nil), \(credit), \(unit.now), \(unit.now))
            ON CONFLICT (subscription_id, period_start) WHERE kind <> 'plan_change' DO NOTHING
            """)
        let after = try await unit.one(
            """
            UPDATE subscriptions SET anchor = \(anchor), current_period_start = \(next.lowerBound),
                current_period_end = \(next.upperBound), price_cents = \(price.cents),
                credit_cents = credit_cents - \(credit),
                status = CASE WHEN \(amount) = 0 THEN 'active' ELSE status END,
                next_price_cents = CASE WHEN \(price.noticed) THEN NULL ELSE next_price_cents END,
                next_price_from = CASE WHEN \(price.noticed) THEN NULL ELSE next_price_from END,
                updated_at = \(unit.now), version = version + 1
            WHERE id = \(before.id) RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self,
            else: DomainError.inconsistent("the renewed subscription was not returned"))
        return AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "subscription", targetID: before.id.text,
            reason: "renewal invoiced for \(UTCDay(next.lowerBound)) to \(UTCDay(next.upperBound))",
            before: try before.snapshot, after: try after.snapshot)
    }

    /// A price the customer was told of by mail, and the first period start it applies to.
    private typealias NoticedPrice = (cents: Int64, from: Date)

    /// The noticed prices of the subscriptions due, in one statement (most have none).
    private func noticedPrices(of due: [UUID], in unit: UnitOfWork) async throws -> [UUID: NoticedPrice] {
        guard !due.isEmpty else { return [:] }
        var prices: [UUID: NoticedPrice] = [:]
        for try await (id, cents, from) in try await unit.connection.send(
            """
            SELECT id, next_price_cents, next_price_from FROM subscriptions
            WHERE id = ANY(\(due)) AND next_price_cents IS NOT NULL AND next_price_from IS NOT NULL
            """, logger: unit.logger
        ).decode((UUID, Int64, Date).self) {
            prices[id] = (cents, from)
        }
        return prices
    }

    /// Of `customers`, those whose account is deleted or erased: their subscriptions end instead of
    /// renewing (deleting an account ends them; this catches one left running before it did).
    private func deletedAccounts(of customers: [UUID], in unit: UnitOfWork) async throws -> Set<UUID> {
        guard !customers.isEmpty else { return [] }
        return Set(
            try await unit.all(
                """
                SELECT id FROM unnest(\(customers)::uuid[]) AS due(id)
                WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = due.id AND c.status <> 'deleted')
                """, { try $0.decode(UUID.self) }))
    }

    /// The subscription its customer canceled at period end (or whose account was deleted), ended
    /// when that period ends.
    private func end(_ before: SubscriptionRecord, at end: Date, why: String, in unit: UnitOfWork) async throws
        -> AuditRecord
    {
        let after = try await unit.one(
            """
            UPDATE subscriptions SET status = 'canceled', ended_at = \(end), updated_at = \(unit.now),
                version = version + 1
            WHERE id = \(before.id) RETURNING \(unescaped: SubscriptionRecord.columns)
            """, as: SubscriptionRecord.self, else: DomainError.inconsistent("the ended subscription was not returned"))
        return AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "subscription", targetID: before.id.text,
            reason: why, before: try before.snapshot, after: try after.snapshot)
    }
}

extension ClaimedInvoice {
    /// The open invoices due a charge whose claim (if any) has lapsed, at most `limit` (of one
    /// subscription's, when named), claimed for `lease` with SKIP LOCKED: an attempt whose charge was
    /// started and never answered keeps its number (the provider is asked about it); otherwise the
    /// next attempt is counted.
    static func claim(limit: Int, lease: Duration, of subscription: UUID? = nil, in unit: UnitOfWork) async throws
        -> [ClaimedInvoice]
    {
        try await unit.all(
            """
            WITH due AS (
                SELECT id, charging FROM invoices
                WHERE status = 'open' AND next_attempt_at <= \(unit.now)
                    AND (claimed_until IS NULL OR claimed_until <= \(unit.now))
                    AND (\(subscription)::uuid IS NULL OR subscription_id = \(subscription))
                    -- a deleted account is not charged (a charge already started is still asked about)
                    AND (charging OR EXISTS (
                        SELECT 1 FROM customers c WHERE c.id = invoices.customer_id AND c.status <> 'deleted'))
                ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            )
            UPDATE invoices i SET claimed_until = \(unit.now.addingTimeInterval(lease.inSeconds)), charging = true,
                attempts = CASE WHEN due.charging THEN i.attempts ELSE i.attempts + 1 END, updated_at = \(unit.now)
            FROM due, subscriptions s
            WHERE i.id = due.id AND s.id = i.subscription_id
            RETURNING \(unescaped: ClaimedInvoice.columns)
            """, as: ClaimedInvoice.self)
    }
}
