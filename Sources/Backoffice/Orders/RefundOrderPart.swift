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

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<ProviderRefund, OrderRefund>> {
        let order = try await Order.fetch(orderID, forUpdate: true, in: unit)  // another shop's: 404 first
        try request.check()
        try OrderTransition.check(order, to: .refunded)
        let payment = try await Payment.of(order: orderID, forUpdate: true, in: unit)
        try Payment.requireIdle(payment)
        let (cash, points) = try await price(of: order, in: unit)
        let pending = try await OrderRefund.pendingCents(of: orderID, in: unit)
        let refundable = payment.map { $0.capturedCents - $0.refundedCents - pending } ?? 0
        guard cash <= refundable else {
            throw DomainError.invalid(
                request.lines == nil ? "amount_cents" : "lines", "exceeds_refundable",
                "at most the \(max(refundable, 0)) cents left to refund of this order's capture")
        }
        let refund = try await insert(cash: cash, points: points, in: unit)
        let event = AuditRecord.order(
            order, action: Self.action, reason: request.reason, before: nil, after: try refund.snapshot)
        guard cash > 0 else {
            try await OrderRefund.settle(refund, in: unit)
            return Audited(.done(refund), event: event)
        }
        guard let providerID = payment?.providerPaymentID else {
            throw DomainError.inconsistent("a captured payment without the provider's payment id")
        }
        return Audited(
            .call(ProviderRefund(refundID: refund.id, providerPaymentID: providerID, amountCents: cash)),
            event: event)
    }

    package func call(_ reservation: ProviderRefund) async throws -> PaymentOutcome {
        try await reservation.call(payments)
    }

    package func record(_ verdict: PaymentOutcome, for reservation: ProviderRefund, in unit: UnitOfWork)
        async throws -> Audited<OrderRefund>
    {
        try await Self.record(verdict, for: reservation, in: unit)
    }

    /// The refund's cash and FitPoints: its lines' prices as paid (each line's units checked
    /// against those not yet refunded), or the amount asked.
    private func price(of order: Order, in unit: UnitOfWork) async throws -> (cash: Int64, points: Int64) {
        guard let asked = request.lines else { return (request.amountCents ?? 0, 0) }
        typealias Bought = (left: Int, paidIn: OrderLine.Currency, unitPrice: Int64)
        let rows = try await unit.all(
            """
            SELECT line, quantity - refunded_quantity, paid_in, unit_price FROM order_lines
            WHERE order_id = \(order.id)
            """
        ) { row -> (Int, Bought) in
            let c = try row.decode((Int32, Int32, String, Int64).self)
            return (Int(c.0), (Int(c.1), try OrderLine.Currency(known: c.2), c.3))
        }
        let bought = Dictionary(uniqueKeysWithValues: rows)
        var (cash, points): (Int64, Int64) = (0, 0)
        for line in asked {
            guard let item = bought[line.line] else {
                throw DomainError.invalid("lines", "unknown_line", "the order has no line \(line.line)")
            }
            guard line.quantity <= item.left else {
                throw DomainError.invalid(
                    "lines", "exceeds_refundable", "line \(line.line) has \(item.left) units left to refund")
            }
            let total = item.unitPrice * Int64(line.quantity)
            if item.paidIn == .usd { cash += total } else { points += total }
        }
        return (cash, points)
    }

    /// The refund's row and lines written, its lines' units taken: pending while the provider is
    /// to be asked, succeeded at once when it has no cash.
    private func insert(cash: Int64, points: Int64, in unit: UnitOfWork) async throws -> OrderRefund {
        let id = unit.newID()
        let (decided, key): (Date?, String?) = cash > 0 ? (nil, "refund:" + id.text) : (unit.now, nil)
        try await unit.execute(
            """
            INSERT INTO order_refunds (tenant_id, id, order_id, amount_cents, fitpoints, restock, reason, status,
                provider_key, requested_by, created_at, decided_at)
            SELECT tenant_id, \(id), id, \(cash), \(points), \(request.restock), \(request.reason),
                \(cash > 0 ? "pending" : "succeeded"), \(key),
                \(unit.principal.operatorID), \(unit.now), \(decided)
            FROM orders WHERE id = \(orderID)
            """)
        if let lines = request.lines {
            try await unit.execute(
                """
                INSERT INTO order_refund_lines (tenant_id, refund_id, order_id, line, quantity)
                SELECT o.tenant_id, \(id), o.id, x.line, x.quantity
                FROM orders o,
                    unnest(\(lines.map { Int32($0.line) })::int[], \(lines.map { Int32($0.quantity) })::int[])
                    AS x (line, quantity)
                WHERE o.id = \(orderID)
                """)
            try await OrderRefund.countUnits(of: id, as: +1, in: unit)
        }
        return try await OrderRefund.locked(id, in: unit)
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
