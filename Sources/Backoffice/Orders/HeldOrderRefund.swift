import BackofficePlatform
import Foundation
import PostgresNIO

/// A partial refund as dual control holds it (`orders.refund` in `policies/approvals.yaml`, `over`
/// in cents of cash): money that leaves the shop, so once an order's refunds would return more than
/// the threshold in all, one person does not send more of it alone (splitting a refund does not
/// escape it). Held, it is the refund's step 1 (`OrderRefundReservation`) with the refund's id chosen
/// when requested; approved, that step runs in the approval's transaction with the approver as its
/// actor, and the provider is asked once the approval has committed (`ApprovedRefund.settle`), or
/// by reconciliation under the same key if that is cut short.
package struct HeldOrderRefund: ApprovalGated {
    package static let action: Action = RefundOrderPart.action
    package let orderID: UUID
    package let request: OrderRefundRequest
    /// The cash it returns, in cents (its lines' prices as paid, or the amount asked).
    package let cashCents: Int64
    /// The order's cash refunded, or being refunded, before it; with `cashCents`, what the rule's
    /// `over` is compared with.
    package let refundedBefore: Int64
    /// The refund's id, chosen when it is requested (`resolved(in:)`), so the approval names it.
    package private(set) var refundID: UUID?

    package init(orderID: UUID, request: OrderRefundRequest, cashCents: Int64, refundedBefore: Int64) {
        (self.orderID, self.request, self.cashCents, self.refundedBefore) = (
            orderID, request, cashCents, refundedBefore
        )
    }

    package var approvalAmount: Int64? { cashCents + refundedBefore }
    package var approvalTarget: (type: String, id: String) { ("order", orderID.text) }
    package var approvalSummary: String {
        func dollars(_ cents: Int64) -> String {
            let rest = String(cents % 100)
            return "$\(Validation.grouped(cents / 100)).\(rest.count == 1 ? "0" + rest : rest)"
        }
        let total = refundedBefore > 0 ? ", \(dollars(cashCents + refundedBefore)) refunded in all" : ""
        return "Refund \(dollars(cashCents)) of order \(orderID.text)\(total)"
            + (request.restock ? " (a return to stock)" : "")
    }
    package var approvalReason: String? { request.reason }

    package func resolved(in unit: UnitOfWork) -> HeldOrderRefund {
        var resolved = self
        resolved.refundID = refundID ?? unit.newID()
        return resolved
    }

    /// Refuses a refund made directly that the policy holds (409 `approval_required`), saying what
    /// to do `instead`: the refund's own steps check it, so no path skips the approval.
    func refuseWhenHeld(_ policies: PolicySet, instead: String) throws {
        guard needsApproval(policies) != nil else { return }
        throw DomainError.conflict(
            code: "approval_required",
            detail: "A refund of this much needs a second person's approval (policies/approvals.yaml): \(instead)")
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Stage<ProviderRefund, OrderRefund>> {
        try await OrderRefundReservation(orderID: orderID, request: request, refundID: refundID).reserve(in: unit)
    }
}

/// The cash a partial refund would return and the order's cash refunded or being refunded before
/// it (`orders.refund`), read before it is made so the approvals policy can say whether it is held:
/// the amount asked, or its lines' prices as paid (another shop's order: 404; a line it lacks: 422;
/// units past those left are the refund's own 422, when it runs).
package struct OrderRefundQuote: Query {
    package static let action: Action = RefundOrderPart.action
    let orderID: UUID
    let request: OrderRefundRequest

    package init(orderID: UUID, request: OrderRefundRequest) { (self.orderID, self.request) = (orderID, request) }

    package func read(in unit: UnitOfWork) async throws -> HeldOrderRefund {
        _ = try await Order.fetch(orderID, in: unit)  // another shop's: 404 first
        try request.check()
        let cash = try await OrderRefundReservation(orderID: orderID, request: request)
            .price(in: unit, checkingLeft: false).cash
        let payment = try await Payment.of(order: orderID, in: unit)
        let before = try await (payment?.refundedCents ?? 0) + OrderRefund.pendingCents(of: orderID, in: unit)
        return HeldOrderRefund(orderID: orderID, request: request, cashCents: cash, refundedBefore: before)
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
