import BackofficePlatform
import Foundation

/// A backend manager ends a subscription at once with a reason (`subscriptions.cancel`), and may
/// refund the current period's invoice: `full` (what is left of it) or `prorated` (the unused part,
/// `Proration.unused`). One transaction ends it (its open invoices void, no retry left) and reserves
/// the refund; the provider is asked with no transaction open; its verdict is recorded as any refund
/// (`InvoiceRefunds`). A subscription whose charge is under way this moment is 409
/// `charge_in_progress` (try again once it is answered); one already ended is 409.
package struct CancelSubscription: StagedOperation {
    package static let action: Action = "subscriptions.cancel"
    package enum Refund: String, Sendable, CaseIterable { case none, full, prorated }
    let subscriptionID: UUID
    let reason: String
    let refund: Refund
    let payments: any PaymentGateway

    package init(subscriptionID: UUID, reason: String, refund: Refund, payments: any PaymentGateway) {
        (self.subscriptionID, self.reason, self.refund, self.payments) = (subscriptionID, reason, refund, payments)
    }

    /// The subscription after it, and its refund when one was asked.
    package struct Canceled: Sendable {
        package let subscription: SubscriptionRecord
        package let refund: InvoiceRefund?
    }

    package struct Reservation: Codable, Sendable {
        let refund: RefundReservation
    }

    package func ready() throws {
        if refund != .none { try payments.refuseWhileUnavailable() }
    }

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<Reservation, Canceled>> {
        var validation = Validation()
        validation.text(reason, "reason", max: 500)
        try validation.check()
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        let before = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: true, in: unit)
        guard before.isLive else {
            throw DomainError.invalidTransition("The subscription has already ended.", current: before.status.rawValue)
        }
        let after = try await before.endNow(reason: reason, in: unit)
        let event = try after.event(Self.action, from: before, reason: "\(reason) (refund: \(refund.rawValue))")
        guard refund != .none, let (invoice, amount) = try await refundable(before, in: unit), amount > 0 else {
            return Audited(.done(Canceled(subscription: after, refund: nil)), event: event)
        }
        let (reservation, refundEvent) = try await InvoiceRefunds.reserve(
            invoice, amount: amount, reason: reason, action: Self.action, in: unit)
        return Audited(.call(Reservation(refund: reservation)), event: event, more: [refundEvent])
    }

    /// The paid invoice of the period under way, and what the refund asked gives back of it.
    private func refundable(_ subscription: SubscriptionRecord, in unit: UnitOfWork) async throws
        -> (UUID, Int64)?
    {
        let paid: (UUID, Int64, Int64, Date, Date)? = try await unit.first(
            """
            SELECT id, amount_cents, refunded_cents, period_start, period_end FROM invoices
            WHERE subscription_id = \(subscription.id) AND status = 'paid' AND period_start <= \(unit.now)
                AND period_end > \(unit.now)
            ORDER BY period_start DESC LIMIT 1
            """
        ) { try $0.decode((UUID, Int64, Int64, Date, Date).self) }
        guard let (id, amount, refunded, start, end) = paid else { return nil }
        let left = amount - refunded
        let wanted = refund == .full ? left : min(left, Proration.unused(amount, of: start..<end, at: unit.now))
        return (id, wanted)
    }

    package func call(_ reservation: Reservation) async throws -> PaymentOutcome {
        try await InvoiceRefunds.call(reservation.refund, payments: payments)
    }

    package func record(_ verdict: PaymentOutcome, for reservation: Reservation, in unit: UnitOfWork) async throws
        -> Audited<Canceled>
    {
        let refund = try await InvoiceRefunds.record(verdict, for: reservation.refund, action: Self.action, in: unit)
        let subscription = try await SubscriptionRecord.fetch(subscriptionID, forUpdate: false, in: unit)
        return refund.map { Canceled(subscription: subscription, refund: $0) }
    }
}

extension SubscriptionRecord {
    /// How long after it was made an `incomplete` subscription's first charge may still be under
    /// way (its provider call, retries included, takes far less): ending it sooner would void an
    /// invoice the provider may be charging. Past it, the subscribe was abandoned.
    static let firstChargeWindow: TimeInterval = 600

    /// Ends this live subscription (locked by the caller) now, by the principal, with `reason`: its
    /// open invoices void, no retry left.
    /// - Throws: 409 `charge_in_progress` while a charge of it is under way (a claimed invoice, or a
    ///   first charge within `firstChargeWindow`): try again once it is answered.
    func endNow(reason: String, in unit: UnitOfWork) async throws -> SubscriptionRecord {
        // Under the open invoices' row locks: a claim committed meanwhile is seen, never voided under a charge.
        let charging = try await unit.all(
            "SELECT charging FROM invoices WHERE subscription_id = \(id) AND status = 'open' FOR UPDATE",
            { try $0.decode(Bool.self) })
        var firstCharge = false
        if status == .incomplete {
            firstCharge =
                try await unit.first(
                    """
                    SELECT created_at > \(unit.now.addingTimeInterval(-Self.firstChargeWindow))
                    FROM subscriptions WHERE id = \(id)
                    """, { try $0.decode(Bool.self) }) ?? false
        }
        guard !charging.contains(true), !firstCharge else {
            throw DomainError.conflict(
                code: "charge_in_progress",
                detail: "A charge of this subscription is under way; try again once it is answered "
                    + "(a minute; ten for a first charge).")
        }
        try await unit.execute(
            """
            UPDATE invoices SET status = 'void', next_attempt_at = NULL, claimed_until = NULL, updated_at = \(unit.now)
            WHERE subscription_id = \(id) AND status = 'open'
            """)
        return try await unit.one(
            """
            UPDATE subscriptions SET status = 'canceled', ended_at = \(unit.now), grace_ends_at = NULL,
                cancel_reason = \(reason), canceled_by = \(unit.principal.operatorID), updated_at = \(unit.now),
                version = version + 1
            WHERE id = \(id) RETURNING \(unescaped: Self.columns)
            """, as: SubscriptionRecord.self,
            else: DomainError.inconsistent("the canceled subscription was not returned"))
    }

    /// Refuses (409 `charge_in_progress`) when the customer, now locked, has a live subscription
    /// that `locked` (`lockLive`, read before that lock) lacks: one being made this moment.
    static func refuseMadeMeanwhile(of customerID: UUID, locked: [SubscriptionRecord], in unit: UnitOfWork)
        async throws
    {
        let now = try await live(of: customerID, locking: false, in: unit)
        guard Set(now.map(\.id)).isSubset(of: Set(locked.map(\.id))) else {
            throw DomainError.conflict(
                code: "charge_in_progress",
                detail: "A subscription of this account is being made this moment; try again in a minute.")
        }
    }

    /// A subscription still running (it would renew), as SQL on `subscriptions s`.
    static let live = "s.status NOT IN ('canceled', 'lapsed')"

    /// The live subscriptions of a customer, locked. Taken before the customer's row: a
    /// subscription's own change locks it first, then its trigger writes the customer's state.
    static func lockLive(of customerID: UUID, in unit: UnitOfWork) async throws -> [SubscriptionRecord] {
        try await live(of: customerID, locking: true, in: unit)
    }

    private static func live(of customerID: UUID, locking: Bool, in unit: UnitOfWork) async throws
        -> [SubscriptionRecord]
    {
        try await unit.all(
            """
            SELECT \(unescaped: columns(of: "s")) FROM subscriptions s
            WHERE s.customer_id = \(customerID) AND \(unescaped: live)
            ORDER BY s.id \(unescaped: locking ? "FOR UPDATE" : "")
            """, as: SubscriptionRecord.self)
    }

    /// Ends the live subscriptions (`lockLive`) of a customer whose account is being deleted, in the
    /// deletion's transaction: a deleted account is never charged again. Each ends at once as a
    /// manager's cancellation without a refund (`subscriptions.cancel`, "the account was deleted";
    /// the deletion's own event has its reason); a refund of the period paid stays the invoice's
    /// (`invoices refund`). Restoring the account does not restart them.
    /// - Throws: 409 `charge_in_progress` while a charge of one is under way: the deletion waits for it.
    static func endForDeletedAccount(_ live: [SubscriptionRecord], in unit: UnitOfWork) async throws
        -> [AuditRecord]
    {
        var events: [AuditRecord] = []
        for before in live {
            let after = try await before.endNow(reason: "the account was deleted", in: unit)
            events.append(
                try after.event(
                    CancelSubscription.action, from: before, reason: "the account was deleted (refund: none)"))
        }
        return events
    }
}
