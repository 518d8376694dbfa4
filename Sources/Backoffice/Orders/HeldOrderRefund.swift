import BackofficePlatform
import Foundation
import PostgresNIO

/// A partial refund as dual control holds it (`orders.refund` in `policies/approvals.yaml`, `over`
/// in cents of cash): money that leaves the shop, so past the threshold one person does not send it
/// alone. Held, it is the refund's step 1 (`OrderRefundReservation`) with the refund's id chosen
/// when requested; approved, that step runs in the approval's transaction with the approver as its
/// actor, and the provider is asked once the approval has committed (`ApprovedRefund.settle`), or
/// by reconciliation under the same key if that is cut short.
package struct HeldOrderRefund: ApprovalGated {
    package static let action: Action = RefundOrderPart.action
    package let orderID: UUID
    package let request: OrderRefundRequest
    /// The cash it returns, in cents (its lines' prices as paid, or the amount asked): what the
    /// rule's `over` is compared with.
    package let cashCents: Int64
    /// The refund's id, chosen when it is requested (`resolved(in:)`), so the approval names it.
    package private(set) var refundID: UUID?

    package init(orderID: UUID, request: OrderRefundRequest, cashCents: Int64) {
        (self.orderID, self.request, self.cashCents) = (orderID, request, cashCents)
    }

    package var approvalAmount: Int64? { cashCents }
    package var approvalTarget: (type: String, id: String) { ("order", orderID.text) }
    package var approvalSummary: String {
        let cents = String(cashCents % 100)
        let amount = "$\(Validation.grouped(cashCents / 100)).\(cents.count == 1 ? "0" + cents : cents)"
        return "Refund \(amount) of order \(orderID.text)" + (request.restock ? " (a return to stock)" : "")
    }
    package var approvalReason: String? { request.reason }

    package func resolved(in unit: UnitOfWork) -> HeldOrderRefund {
        var resolved = self
        resolved.refundID = refundID ?? unit.newID()
        return resolved
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Stage<ProviderRefund, OrderRefund>> {
        try await OrderRefundReservation(orderID: orderID, request: request, refundID: refundID).reserve(in: unit)
    }
}

/// The cash a partial refund would return (`orders.refund`), read before it is made so the
/// approvals policy can say whether it is held: the amount asked, or its lines' prices as paid
/// (another shop's order: 404; a line it lacks, or units past those left: 422).
package struct OrderRefundQuote: Query {
    package static let action: Action = RefundOrderPart.action
    let orderID: UUID
    let request: OrderRefundRequest

    package init(orderID: UUID, request: OrderRefundRequest) { (self.orderID, self.request) = (orderID, request) }

    package func read(in unit: UnitOfWork) async throws -> Int64 {
        _ = try await Order.fetch(orderID, in: unit)  // another shop's: 404 first
        try request.check()
        guard request.lines != nil else { return request.amountCents ?? 0 }
        return try await OrderRefundReservation(orderID: orderID, request: request).price(in: unit).cash
    }
}

/// An approved held refund's last steps, run once the approval has committed, as the approver: the
/// provider asked under the refund's key (no transaction open), its verdict recorded as the refund's
/// own (`RefundOrderPart.record`). Nil when there is nothing to ask (no cash, or decided already) or
/// the provider cannot be reached now: reconciliation then finishes it under the same key.
package enum ApprovedRefund {
    package static func settle(
        _ request: ApprovalRequest, database: Database, context: OperationContext, payments: any PaymentGateway
    ) async throws -> OrderRefund? {
        guard request.action == HeldOrderRefund.action.rawValue,
            let held = try DualControlledChanges.change(of: request) as? HeldOrderRefund, let id = held.refundID,
            let reservation = try await database.read(PendingOrderRefund(refundID: id), context: context)
        else { return nil }
        let verdict: PaymentOutcome
        do { verdict = try await reservation.call(payments) } catch PaymentRefusal.providerUnavailable { return nil }
        return try await database.run(
            FinishOrderRefund(reservation: reservation, verdict: verdict, permission: HeldOrderRefund.action),
            context: context)
    }
}

/// A refund still waiting on the provider, as its call needs it (`orders.refund`); nil once decided.
struct PendingOrderRefund: Query {
    static let action: Action = RefundOrderPart.action
    let refundID: UUID

    func read(in unit: UnitOfWork) async throws -> ProviderRefund? {
        try await unit.first(
            """
            SELECT r.id, p.provider_payment_id, r.amount_cents FROM order_refunds r
            JOIN payments p ON p.order_id = r.order_id
            WHERE r.id = \(refundID) AND r.status = 'pending' AND p.provider_payment_id IS NOT NULL
            """
        ) { row in
            let c = try row.decode((UUID, String, Int64).self)
            return ProviderRefund(refundID: c.0, providerPaymentID: c.1, amountCents: c.2)
        }
    }
}
