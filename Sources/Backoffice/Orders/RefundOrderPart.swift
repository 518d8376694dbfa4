import BackofficePlatform
import Foundation
import PostgresNIO

/// The partner refunds part of a shipped or delivered order (`orders.refund`): some lines (with
/// `restock`, a return that puts their units back in stock) or an amount, with a reason. Staged:
///
/// 1. `reserve`, one transaction under the order's lock: the refund recorded `pending`, its lines'
///    units taken (never more than were bought less those refunded or being refunded, 422
///    `exceeds_refundable`), its cash never more than the capture less what was refunded or is
///    being refunded (422 `exceeds_refundable`), so refunds at once queue on the lock and their sum
///    holds. A refund of FitPoints lines alone completes here. 409 `payment_in_progress` while a
///    move's provider operation is under way; 409 with the current state unless shipped or delivered.
/// 2. `call`: the provider refunds the cash under `refund:<refund id>`.
/// 3. `record`, under the order's lock again: succeeded → the payment's refunded cents, the FitPoints
///    back through the ledger, the units back in stock for a return (each once); declined → the
///    refund failed with the provider's code and its units freed. Each step is audited.
package struct RefundOrderPart: StagedOperation {
    package static let action: Action = OrderMove.refund.action
    let orderID: UUID
    let request: OrderRefundRequest
    let payments: any PaymentGateway

    package init(orderID: UUID, request: OrderRefundRequest, payments: any PaymentGateway) {
        (self.orderID, self.request, self.payments) = (orderID, request, payments)
    }

    package func ready() throws {
        try payments.refuseWhileUnavailable()
    }

    /// Step 1 (`OrderRefundReservation`), refused with 409 `approval_required` when
    /// `policies/approvals.yaml` holds a refund that brings the order's refunded cash this high:
    /// that one is requested for a second person's approval instead (`HeldOrderRefund`), which
    /// performs this step when approved.
    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<ProviderRefund, OrderRefund>> {
        try await OrderRefundReservation(orderID: orderID, request: request).reserve(in: unit) { cash, before in
            try HeldOrderRefund(orderID: orderID, request: request, cashCents: cash, refundedBefore: before)
                .refuseWhenHeld(unit.policies, instead: "request it instead.")
        }
    }

    package func call(_ reservation: ProviderRefund) async throws -> PaymentOutcome {
        try await reservation.call(payments)
    }

    package func record(_ verdict: PaymentOutcome, for reservation: ProviderRefund, in unit: UnitOfWork)
        async throws -> Audited<OrderRefund>
    {
        try await Self.record(verdict, for: reservation, in: unit)
    }

}

extension RefundOrderPart {
    /// The provider's verdict recorded once, under the order's lock: succeeded → the payment's
    /// refunded cents, the FitPoints back, the units in stock for a return; declined → failed with
    /// the provider's code, its units freed; pending → left for reconciliation. Audited as the
    /// partner's refund (`orders.refund`), whoever records it.
    static func record(_ verdict: PaymentOutcome, for reservation: ProviderRefund, in unit: UnitOfWork)
        async throws -> Audited<OrderRefund>
    {
        let orderID = try await unit.first(
            "SELECT order_id FROM order_refunds WHERE id = \(reservation.refundID)", { try $0.decode(UUID.self) })
        guard let orderID else { throw DomainError.notFound("Refund \(reservation.refundID.text)") }
        let order = try await Order.fetch(orderID, forUpdate: true, in: unit)  // the lock the reservation took
        let before = try await OrderRefund.locked(reservation.refundID, in: unit)
        guard before.status == .pending else { return .unchanged(before) }
        let after: OrderRefund
        switch verdict {
        case .pending: return .unchanged(before)
        case .succeeded(let providerRefundID):
            after = try await Self.decide(before, .succeeded, providerRefundID: providerRefundID, in: unit)
            guard let payment = try await Payment.of(order: orderID, forUpdate: true, in: unit) else {
                throw DomainError.inconsistent("a refund of an order without its payment")
            }
            let refunded = payment.refundedCents + reservation.amountCents
            try await Payment.record(
                payment.id, status: refunded == payment.capturedCents ? .refunded : payment.status,
                refundedCents: refunded, in: unit)
            try await OrderRefund.settle(after, in: unit)
        case .declined(let code):
            after = try await Self.decide(before, .failed, failureCode: code, in: unit)
            try await OrderRefund.countUnits(of: before.id, as: -1, in: unit)
        }
        return Audited(
            after,
            event: AuditRecord.order(
                order, action: RefundOrderPart.action, reason: "the payment provider's verdict on the refund",
                before: try before.snapshot,
                after: try after.snapshot))
    }

    /// The refund's verdict written.
    private static func decide(
        _ refund: OrderRefund, _ status: OrderRefund.Status, providerRefundID: String? = nil,
        failureCode: String? = nil, in unit: UnitOfWork
    ) async throws -> OrderRefund {
        try await unit.one(
            """
            UPDATE order_refunds r SET status = \(status.rawValue), provider_refund_id = \(providerRefundID),
                failure_code = \(failureCode), decided_at = \(unit.now)
            WHERE r.id = \(refund.id) RETURNING \(unescaped: OrderRefund.columns)
            """, as: OrderRefund.self, else: DomainError.inconsistent("the decided refund was not returned"))
    }
}

extension OrderRefund {
    /// What a succeeded refund gives back: its FitPoints to the customer through the ledger (once),
    /// and for a return its lines' units to stock (goods locked in id order, as checkout locks them).
    static func settle(_ refund: OrderRefund, in unit: UnitOfWork) async throws {
        if refund.fitPoints > 0 {
            _ = try await unit.first(
                """
                SELECT return_refund_fitpoints(\(refund.id), \(unit.principal.operatorID),
                    \("order partly refunded: " + refund.reason), \(unit.now))
                """, { try $0.decode(Int64.self) })
        }
        guard refund.restock else { return }
        try await unit.execute(
            """
            WITH returned AS (
                SELECT ol.good_id, sum(r.quantity) AS quantity FROM order_refund_lines r
                JOIN order_lines ol ON ol.order_id = r.order_id AND ol.line = r.line
                WHERE r.refund_id = \(refund.id) GROUP BY ol.good_id
            ), locked AS (
                SELECT id FROM goods WHERE id IN (SELECT good_id FROM returned) ORDER BY id FOR UPDATE
            )
            UPDATE goods g SET stock = g.stock + r.quantity, updated_at = \(unit.now), version = g.version + 1
            FROM returned r WHERE g.id = r.good_id AND g.id IN (SELECT id FROM locked)
            """)
    }
}
