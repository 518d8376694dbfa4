import BackofficePlatform
import Foundation
import PostgresNIO

/// Step 1 of a partial refund (`RefundOrderPart`), also what a second person's approval performs
/// for a refund held for it (`HeldOrderRefund`): one transaction under the order's lock, the refund
/// recorded `pending` (its lines' units taken, its cash within the capture less what was refunded or
/// is being refunded), or completed at once when it has no cash.
struct OrderRefundReservation {
    let orderID: UUID
    let request: OrderRefundRequest
    /// The refund's id, when it was chosen before (a held refund names it); else a new one.
    var refundID: UUID?

    /// Step 1: the refund checked and recorded under the order's lock; `admit` sees its cash and
    /// the cash refunded or being refunded of the order before it, and may refuse it.
    func reserve(in unit: UnitOfWork, admit: (_ cash: Int64, _ before: Int64) throws -> Void = { _, _ in }) async throws
        -> Audited<Stage<ProviderRefund, OrderRefund>>
    {
        let order = try await Order.fetch(orderID, forUpdate: true, in: unit)  // another shop's: 404 first
        try request.check()
        try OrderTransition.check(order, to: .refunded)
        let payment = try await Payment.of(order: orderID, forUpdate: true, in: unit)
        try Payment.requireIdle(payment)
        let (cash, points) = try await price(in: unit)
        let pending = try await OrderRefund.pendingCents(of: orderID, in: unit)
        let refundable = payment.map { $0.capturedCents - $0.refundedCents - pending } ?? 0
        guard cash <= refundable else {
            throw DomainError.invalid(
                request.lines == nil ? "amount_cents" : "lines", "exceeds_refundable",
                "at most the \(max(refundable, 0)) cents left to refund of this order's capture")
        }
        try admit(cash, (payment?.refundedCents ?? 0) + pending)
        let refund = try await insert(cash: cash, points: points, in: unit)
        let event = AuditRecord.order(
            order, action: RefundOrderPart.action, reason: request.reason, before: nil, after: try refund.snapshot)
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

    /// The refund's cash and FitPoints: its lines' prices as paid (each line's units checked
    /// against those not yet refunded), or the amount asked.
    /// The refund's cash and FitPoints; with `checkingLeft`, each line's units checked against
    /// those not yet refunded too.
    func price(in unit: UnitOfWork, checkingLeft: Bool = true) async throws -> (cash: Int64, points: Int64) {
        guard let asked = request.lines else { return (request.amountCents ?? 0, 0) }
        typealias Bought = (left: Int, paidIn: OrderLine.Currency, unitPrice: Int64)
        let rows = try await unit.all(
            """
            SELECT line, quantity - refunded_quantity, paid_in, unit_price FROM order_lines
            WHERE order_id = \(orderID)
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
            guard line.quantity <= item.left || !checkingLeft else {
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
        let id = refundID ?? unit.newID()
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
