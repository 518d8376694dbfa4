import BackofficePlatform
import Foundation

/// What reconciliation found.
package struct ReconcileReport: Sendable {
    package var checked: Int
    /// Orders whose payment the provider authorized (now paid).
    package var completed: [UUID]
    /// Orders whose payment failed or was never made (now payment_failed, stock and FitPoints back).
    package var cancelled: [UUID]
    /// Orders whose move (ship, cancel, refund) or partial refund was left waiting on the provider,
    /// now finished.
    package var finishedMoves: [UUID] = []
    /// Payments the provider has not decided yet, or could not be asked about.
    package var stillPending: Int
}

/// Resolves payments whose verdict was never recorded (`payments.reconcile`): a `pending` payment
/// whose webhook never came (the provider's status of it); an `authorizing` one whose checkout
/// ended between its reservation and its verdict — a crash, a timeout (the payment the provider
/// made under the order's reference; none made: failed `not_attempted`); and a partner's move
/// whose capture, void or refund was left under way (asked again under the same key: the
/// provider does it once; then the move completes, or stays undone if refused). Only payments
/// older than `olderThanMinutes`, and those waiting on a call of ours only once older than the
/// provider's longest call, so a request still calling is never raced.
///
/// No transaction is open while the provider is asked: the candidates are read, each is asked
/// about with no connection held, and each verdict is recorded in a transaction of its own under
/// the payment's row lock, only if the payment is still as it was read (`PaymentCompletion`), and
/// audited on its partner's chain; a summary event closes the run.
package struct ReconcilePayments: Sendable {
    package static let action: Action = "payments.reconcile"
    let olderThanMinutes: Int
    let payments: any PaymentGateway

    package init(olderThanMinutes: Int?, payments: any PaymentGateway) {
        self.olderThanMinutes = olderThanMinutes ?? 10
        self.payments = payments
    }

    /// Runs the reconciliation for `context`'s principal (policy checked at each step), or as the
    /// system (`system`: the periodic job of `serve`).
    package func run(_ database: Database, context: OperationContext, system: Bool = false) async throws
        -> ReconcileReport
    {
        var validation = Validation()
        validation.require(
            (0...10_080).contains(olderThanMinutes), "older_than_minutes", "out_of_range", "must be from 0 to 10,080")
        try validation.check()
        func step<Operation: AuditedOperation>(_ operation: Operation) async throws -> Operation.Output {
            try await database.run(operation, context: context, asSystem: system)
        }
        let candidates = UnsettledPayments(
            olderThanMinutes: olderThanMinutes, callGrace: payments.longestCall, provider: payments.provider)
        let unsettled = try await database.read(candidates, context: context, asSystem: system)
        var report = ReconcileReport(checked: unsettled.count, completed: [], cancelled: [], stillPending: 0)
        for (payment, pending) in unsettled {
            if let pending {
                if try await finish(pending) {
                    report.finishedMoves.append(payment.orderID)
                } else {
                    report.stillPending += 1
                }
                continue
            }
            let verdict: PaymentOutcome?
            do {
                if payment.status == .authorizing {
                    // none made under the order's reference: never attempted, failed as such
                    verdict = try await payments.call {
                        try await $0.find(reference: payment.orderID.text) ?? .declined(code: "not_attempted")
                    }
                } else if let providerID = payment.providerPaymentID {
                    verdict = try await payments.call { try await $0.status(of: providerID) }
                } else {
                    verdict = nil
                }
            } catch PaymentRefusal.providerUnavailable {
                verdict = nil
            }
            guard let verdict,
                let after = try await step(RecordReconciledVerdict(paymentID: payment.id, verdict: verdict))
            else {
                report.stillPending += 1
                continue
            }
            switch after.status {
            case .paid: report.completed.append(after.id)
            case .paymentFailed: report.cancelled.append(after.id)
            default: report.stillPending += 1
            }
        }
        try await finishRefunds(database, context: context, system: system, into: &report)
        _ = try await step(RecordJobSummary(target: payments.provider, summary: PaymentsReconciled(report)))
        return report

        /// Asks again for a partner's move left under way and records the answer as the move's own;
        /// true when the move completed.
        func finish(_ pending: PaymentStep) async throws -> Bool {
            switch pending.operation {
            case .capture: try await finish(ShipOrder(resuming: pending, payments: payments), pending)
            case .void: try await finish(CancelOrder(resuming: pending, payments: payments), pending)
            case .refund: try await finish(RefundOrder(resuming: pending, payments: payments), pending)
            }
        }

        func finish<Move: StagedOrderMove>(_ move: Move, _ pending: PaymentStep) async throws -> Bool {
            let verdict: PaymentOutcome
            do { verdict = try await move.call(pending) } catch PaymentRefusal.providerUnavailable { return false }
            return try await step(FinishMove(move: move, verdict: verdict, step: pending)).refused == nil
        }
    }
}

extension ReconcilePayments {
    /// What reconciliation looks at: what was left before `before` (older than `olderThanMinutes`),
    /// and what waits on a call of ours only before `calledBefore` (also older than the provider's
    /// longest call, so a request still calling is never raced).
    static func cutoffs(now: Date, olderThanMinutes: Int, callGrace: Duration) -> (before: Date, calledBefore: Date) {
        let before = now.addingTimeInterval(-Double(olderThanMinutes) * 60)
        return (before, min(before, now.addingTimeInterval(-(Double(callGrace.components.seconds) + 1))))
    }

    /// Asks again for each partial refund left at the provider (a crash, no verdict) under its own
    /// key, and records the answer as the refund's own (`FinishOrderRefund`).
    func finishRefunds(
        _ database: Database, context: OperationContext, system: Bool, into report: inout ReconcileReport
    )
        async throws
    {
        let unsettled = UnsettledOrderRefunds(
            olderThanMinutes: olderThanMinutes, callGrace: payments.longestCall, provider: payments.provider)
        for refund in try await database.read(unsettled, context: context, asSystem: system) {
            report.checked += 1
            let verdict: PaymentOutcome
            do { verdict = try await refund.call(payments) } catch PaymentRefusal.providerUnavailable {
                report.stillPending += 1
                continue
            }
            let after = try await database.run(
                FinishOrderRefund(reservation: refund, verdict: verdict), context: context, asSystem: system)
            if after.status == .pending {
                report.stillPending += 1
            } else {
                report.finishedMoves.append(after.orderID)
            }
        }
    }
}

/// The partial refunds waiting on the provider longer than any call takes, oldest first (at most 500).
struct UnsettledOrderRefunds: Query {
    static let action = ReconcilePayments.action
    let olderThanMinutes: Int
    let callGrace: Duration
    let provider: String

    func read(in unit: UnitOfWork) async throws -> [ProviderRefund] {
        let (_, calledBefore) = ReconcilePayments.cutoffs(
            now: unit.now, olderThanMinutes: olderThanMinutes, callGrace: callGrace)
        return try await unit.all(
            """
            SELECT r.id, p.provider_payment_id, r.amount_cents FROM order_refunds r
            JOIN payments p ON p.order_id = r.order_id
            WHERE r.status = 'pending' AND p.provider = \(provider) AND r.created_at <= \(calledBefore)
            ORDER BY r.created_at LIMIT 500
            """
        ) { row in
            let c = try row.decode((UUID, String, Int64).self)
            return ProviderRefund(refundID: c.0, providerPaymentID: c.1, amountCents: c.2)
        }
    }
}

/// A partial refund's verdict recorded by the refund's own record step (its audit event names the
/// refund, with the one who finishes it as actor): by reconciliation for one left at the provider,
/// permitted by `payments.reconcile`, or by the approver of a held refund (`orders.refund`).
struct FinishOrderRefund: AuditedChange {
    let reservation: ProviderRefund
    let verdict: PaymentOutcome
    var permission: Action = ReconcilePayments.action

    func perform(in unit: UnitOfWork) async throws -> Audited<OrderRefund> {
        try await RefundOrderPart.record(verdict, for: reservation, in: unit)
    }
}

/// The payments reconciliation looks at, oldest first (at most 500 per run), each with the
/// partner's move under way on it, if any.
struct UnsettledPayments: Query {
    static let action = ReconcilePayments.action
    let olderThanMinutes: Int
    let callGrace: Duration
    let provider: String

    func read(in unit: UnitOfWork) async throws -> [(Payment, PaymentStep?)] {
        let (before, calledBefore) = ReconcilePayments.cutoffs(
            now: unit.now, olderThanMinutes: olderThanMinutes, callGrace: callGrace)
        var found: [(Payment, PaymentStep?)] = []
        for try await row in try await unit.connection.send(
            """
            SELECT \(unescaped: Payment.columns), pending_detail::text FROM payments
            WHERE provider = \(provider)
              AND ((status = 'pending' AND pending_operation IS NULL AND created_at <= \(before))
                OR (status = 'authorizing' AND created_at <= \(calledBefore))
                OR (pending_operation IS NOT NULL AND pending_since <= \(calledBefore)))
            ORDER BY created_at LIMIT 500
            """, logger: unit.logger)
        {
            var cells = RowCells(row, of: "payment")
            let payment = try Payment(cells: &cells)
            let step = try cells.next(String?.self).map {
                try JSONDecoder().decode(PaymentStep.self, from: Data($0.utf8))
            }
            found.append((payment, payment.pendingOperation == nil ? nil : step))
        }
        return found
    }
}

/// One payment's verdict as reconciliation learned it, recorded if the payment is still
/// unsettled (under its row lock); the order after, nil when nothing changed.
struct RecordReconciledVerdict: AuditedOperation {
    static let action = ReconcilePayments.action
    let paymentID: UUID
    let verdict: PaymentOutcome

    func perform(in unit: UnitOfWork) async throws -> Audited<Order?> {
        let payment = try await Payment.locked(paymentID, in: unit)
        let order = try await Order.fetch(payment.orderID, forUpdate: true, in: unit)
        let after: Order?
        switch (payment.status, verdict) {
        case (.authorizing, _): after = try await PaymentCompletion.authorization(verdict, payment, order, in: unit)
        case (.pending, .succeeded): after = try await PaymentCompletion.succeeded(payment, order, in: unit)
        case (.pending, .declined(let code)):
            after = try await PaymentCompletion.failed(payment, order, code: code, in: unit)
        default: after = nil
        }
        guard let after else { return .unchanged(nil) }
        return Audited(
            after,
            event: AuditRecord.order(
                order, action: Self.action, reason: "the payment provider's verdict, found by reconciliation",
                before: try order.snapshot,
                after: try after.snapshot))
    }
}

/// A payments reconciliation's figures, as its run's audit event holds them.
struct PaymentsReconciled: JobSummary {
    static let action = ReconcilePayments.action
    static let targetType = "payments"
    let checked: Int, completed: Int, cancelled: Int, finished_moves: Int, still_pending: Int

    init(_ report: ReconcileReport) {
        (checked, completed, cancelled) = (report.checked, report.completed.count, report.cancelled.count)
        (finished_moves, still_pending) = (report.finishedMoves.count, report.stillPending)
    }
}

/// A partner's move left waiting on the provider, finished by reconciliation: the move's own
/// record step (its audit event names the move, with the reconciler as actor), permitted by
/// `payments.reconcile`.
struct FinishMove<Move: StagedOrderMove>: AuditedOperation {
    static var action: Action { ReconcilePayments.action }
    let move: Move
    let verdict: PaymentOutcome
    let step: PaymentStep

    func perform(in unit: UnitOfWork) async throws -> Audited<MoveOutcome> {
        try await move.record(verdict, for: step, in: unit)
    }
}
