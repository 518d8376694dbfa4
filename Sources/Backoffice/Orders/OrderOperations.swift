import BackofficePlatform
import Foundation
import PostgresNIO

/// The moves a partner makes on one of its orders. Accept and deliver need nothing from the
/// payment provider (`AdvanceOrder`, one transaction); ship, cancel and refund have the provider
/// act on the payment first (`StagedOrderMove`s: `ShipOrder`, `CancelOrder`, `RefundOrder`).
package enum OrderMove: String, Sendable, CaseIterable {
    case accept, ship, deliver, cancel, refund

    /// The status the move gives the order (`OrderTransition` says from which).
    package var target: Order.Status {
        switch self {
        case .accept: .accepted
        case .ship: .shipped
        case .deliver: .delivered
        case .cancel: .cancelled
        case .refund: .refunded
        }
    }

    /// The permission of `policies/access.yaml` the move needs, which is also the action its audit
    /// events record.
    package var action: Action {
        switch self {
        case .accept: "orders.accept"
        case .ship: "orders.ship"
        case .deliver: "orders.deliver"
        case .cancel: "orders.cancel"
        case .refund: "orders.refund"
        }
    }

    /// What the payment provider is asked to do first, and the problem code (409) its refusal is
    /// answered with; nil for a move the provider has no part in.
    package var provider: (operation: PaymentOperation, refusal: String)? {
        switch self {
        case .ship: (.capture, "capture_failed")
        case .cancel: (.void, "void_refused")
        case .refund: (.refund, "refund_refused")
        case .accept, .deliver: nil
        }
    }

    /// Whether the payment provider acts on the payment first (capture, void, refund): such a move
    /// is staged, with no transaction held while the provider answers.
    package var callsProvider: Bool { provider != nil }
}

/// Accept or deliver: the moves the payment provider has no part in, made in one transaction with
/// the audit event. The partner accepts a paid order (`orders.accept`: it will fulfil it) or records
/// a shipped order's delivery (`orders.deliver`). The order is locked and the move checked against
/// `OrderTransition` (409 with the current state); another partner's order is 404. The call needs
/// the move's permission, and its audit event records the move's action. A move that calls the
/// provider is refused (`inconsistent`): it is a `StagedOrderMove`.
package struct AdvanceOrder: AuditedChange {
    package let orderID: UUID
    package let move: OrderMove

    package init(orderID: UUID, move: OrderMove) { (self.orderID, self.move) = (orderID, move) }

    package var permission: Action { move.action }

    package func perform(in unit: UnitOfWork) async throws -> Audited<OrderDetail> {
        guard !move.callsProvider else {
            throw DomainError.inconsistent("\(move.rawValue) calls the payment provider: it is a staged move")
        }
        let before = try await Order.fetch(orderID, forUpdate: true, in: unit)
        try OrderTransition.check(before, to: move.target)
        let after = try await OrderStatus.move(before, to: move.target, reason: nil, shipment: nil, in: unit)
        return Audited(
            try await OrderDetail.load(after, in: unit),
            event: AuditRecord.order(
                before, action: move.action, reason: nil, before: try before.snapshot, after: try after.snapshot))
    }
}

/// Writing an order's new status, and the reversals a cancelled or refunded order needs.
enum OrderStatus {
    /// Records `order`'s move to `status` (a new version).
    static func move(
        _ order: Order, to status: Order.Status, reason: String?, shipment: (carrier: String, tracking: String)?,
        in unit: UnitOfWork
    )
        async throws -> Order
    {
        let after = try await unit.one(
            """
            UPDATE orders o SET status = \(status.rawValue), status_reason = coalesce(\(reason), status_reason),
                carrier = coalesce(\(shipment?.carrier), carrier), tracking_number = coalesce(\(shipment?.tracking),
                    tracking_number),
                updated_at = \(unit.now), version = version + 1
            WHERE o.id = \(order.id) RETURNING \(unescaped: Order.columns)
            """, as: Order.self, else: DomainError.notFound("Order \(order.id.text)"))
        return after
    }

    /// Puts the order's units back in stock (goods locked in id order, as checkout locks them).
    static func releaseStock(of order: Order, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            WITH locked AS (
                SELECT id FROM goods WHERE id IN (SELECT good_id FROM order_lines WHERE order_id = \(order.id)) ORDER
                    BY id FOR UPDATE
            )
            UPDATE goods g SET stock = g.stock + l.quantity, updated_at = \(unit.now), version = g.version + 1
            FROM order_lines l WHERE l.order_id = \(order.id) AND g.id = l.good_id AND g.id IN (SELECT id FROM locked)
            """)
    }

    /// Gives the customer back the FitPoints the order redeemed (once; the order must already be
    /// cancelled or refunded in this transaction).
    static func returnFitPoints(of order: Order, reason: String, in unit: UnitOfWork) async throws {
        guard order.totalFitPoints > 0 else { return }
        _ = try await unit.first(
            "SELECT return_order_fitpoints(\(order.id), \(unit.principal.operatorID), \(reason), \(unit.now))",
            { try $0.decode(Int64.self) })
    }

    /// What a cancelled or failed order gives back: its units to stock, its FitPoints to the customer.
    /// `reason` is the ledger's reason for the returned FitPoints, as given.
    static func giveBack(_ order: Order, reason: String, in unit: UnitOfWork) async throws {
        try await releaseStock(of: order, in: unit)
        try await returnFitPoints(of: order, reason: reason, in: unit)
    }
}

/// The partner ships an accepted order (`orders.ship`, carrier and tracking number required):
/// the card authorization is captured first (a `StagedOrderMove`; refused: 409 `capture_failed`, the
/// order stays accepted — cancel it instead).
package struct ShipOrder: StagedOrderMove {
    static let move = OrderMove.ship
    let orderID: UUID
    let carrier: String
    let trackingNumber: String
    let payments: any PaymentGateway

    package init(orderID: UUID, carrier: String, trackingNumber: String, payments: any PaymentGateway) {
        self.orderID = orderID
        self.carrier = carrier.trimmingCharacters(in: .whitespaces)
        self.trackingNumber = trackingNumber.trimmingCharacters(in: .whitespaces)
        self.payments = payments
    }

    init(resuming step: PaymentStep, payments: any PaymentGateway) {
        self.init(
            orderID: step.orderID, carrier: step.carrier ?? "", trackingNumber: step.trackingNumber ?? "",
            payments: payments)
    }

    func needsProvider(_ payment: Payment) -> Bool { payment.status == .authorized }

    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? {
        try Self.check(carrier: carrier, trackingNumber: trackingNumber)
        return (carrier, trackingNumber)
    }

    /// A shipment's carrier and tracking number: each required, at most 100 characters (422).
    static func check(carrier: String?, trackingNumber: String?) throws {
        var validation = Validation()
        validation.text(carrier, "carrier", max: 100)
        validation.text(trackingNumber, "tracking_number", max: 100)
        try validation.check()
    }
}

/// What a move for a stated reason (cancel, refund) is asked: the order, the reason as typed
/// (trimmed), and the payment provider.
struct ReasonedMoveRequest: Sendable {
    let orderID: UUID
    let reason: String?
    let payments: any PaymentGateway

    init(orderID: UUID, reason: String?, payments: any PaymentGateway) {
        (self.orderID, self.reason, self.payments) = (
            orderID, reason?.trimmingCharacters(in: .whitespacesAndNewlines), payments
        )
    }
}

/// A staged move for a stated reason (cancel, refund): its request's fields, and rebuilt from a
/// step under way with the reason the step kept.
protocol ReasonedOrderMove: StagedOrderMove {
    var request: ReasonedMoveRequest { get }
    init(orderID: UUID, reason: String?, payments: any PaymentGateway)
}

extension ReasonedOrderMove {
    var orderID: UUID { request.orderID }
    var reason: String? { request.reason }
    var payments: any PaymentGateway { request.payments }

    init(resuming step: PaymentStep, payments: any PaymentGateway) {
        self.init(orderID: step.orderID, reason: step.reason, payments: payments)
    }
}

/// The partner cancels an order before it ships (`orders.cancel`, reason required): the card
/// authorization voided first (a `StagedOrderMove`; refused: 409 `void_refused`), then stock back and
/// FitPoints back to the customer.
package struct CancelOrder: ReasonedOrderMove {
    static let move = OrderMove.cancel
    let request: ReasonedMoveRequest

    package init(orderID: UUID, reason: String?, payments: any PaymentGateway) {
        request = ReasonedMoveRequest(orderID: orderID, reason: reason, payments: payments)
    }

    func precheck() throws { _ = try requireReason(reason) }

    /// An authorization, or a payment the provider is still deciding (voided so it never completes).
    func needsProvider(_ payment: Payment) -> Bool { payment.status == .authorized || payment.status == .pending }

    func settle(_ order: Order, in unit: UnitOfWork) async throws {
        try await OrderStatus.giveBack(order, reason: "order cancelled: \(reason ?? "")", in: unit)
    }
}

/// The partner refunds a shipped or delivered order (`orders.refund`, reason required): what is
/// left of the capture refunded at the provider first (a `StagedOrderMove`; refused: 409
/// `refund_refused`), then the FitPoints its partial refunds did not give back to the customer. Stock
/// is not restored (a partial refund's return does that: `RefundOrderPart`). 409 `payment_in_progress`
/// while a partial refund is at the provider. 409 `approval_required` when `policies/approvals.yaml`
/// holds a refund that brings the order's refunded cash that high: such a refund is made in part,
/// held for a second person.
package struct RefundOrder: ReasonedOrderMove {
    static let move = OrderMove.refund
    let request: ReasonedMoveRequest

    package init(orderID: UUID, reason: String?, payments: any PaymentGateway) {
        request = ReasonedMoveRequest(orderID: orderID, reason: reason, payments: payments)
    }

    func needsProvider(_ payment: Payment) -> Bool {
        payment.status == .captured && payment.capturedCents > payment.refundedCents
    }

    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? {
        _ = try requireReason(reason)  // after the state check, as it always was
        guard try await OrderRefund.pendingCents(of: order.id, in: unit) == 0 else {
            throw DomainError.conflict(
                code: "payment_in_progress",
                detail: "A partial refund of this order is at the provider now; try again once its answer is in.")
        }
        let payment = try await Payment.of(order: order.id, in: unit)
        let cash = payment.map { $0.capturedCents - $0.refundedCents } ?? 0
        try HeldOrderRefund(
            orderID: order.id, request: OrderRefundRequest(lines: nil, amountCents: cash, restock: false, reason: ""),
            cashCents: cash, refundedBefore: payment?.refundedCents ?? 0
        ).refuseWhenHeld(
            unit.policies,
            instead: "refund it in part instead (its lines or an amount), which is held for that approval.")
        return nil
    }

    func settle(_ order: Order, in unit: UnitOfWork) async throws {
        try await OrderStatus.returnFitPoints(of: order, reason: "order refunded: \(reason ?? "")", in: unit)
    }
}
