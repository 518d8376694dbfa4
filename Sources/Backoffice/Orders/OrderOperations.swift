import Foundation
import PostgresNIO

/// What every move of a partner's order is made of: the order, the status it moves to, and the
/// steps around the status change. Another partner's order is 404.
protocol OrderMoveRules: UseCase {
    var orderID: UUID { get }
    var target: Order.Status { get }
    var reason: String? { get }
    /// Checks of the request alone, before the order is read (a required reason).
    func precheck() throws
    /// What the move checks before the status changes; returns the carrier and tracking number
    /// to record, if any.
    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)?
    /// What follows the status change in the same transaction (stock and FitPoints given back).
    func settle(_ order: Order, in unit: UnitOfWork) async throws
}

extension OrderMoveRules {
    var reason: String? { nil }
    func precheck() throws {}
    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? { nil }
    func settle(_ order: Order, in unit: UnitOfWork) async throws {}
}

/// A partner's move of one of its orders that needs nothing from the payment provider
/// (`orders.accept`, `orders.deliver`): the order locked, the move checked against
/// `OrderTransition` (409 with the current state), the change and its audit event in one
/// transaction. The moves that do need it are `PaymentMove`s.
protocol OrderMove: OrderMoveRules, AuditedOperation where Output == OrderDetail {}

extension OrderMove {
    package func perform(in unit: UnitOfWork) async throws -> Audited<OrderDetail> {
        try precheck()
        let before = try await Order.fetch(orderID, forUpdate: true, in: unit)
        try OrderTransition.check(before, to: target)
        let shipment = try await apply(to: before, in: unit)
        let after = try await OrderStatus.move(before, to: target, reason: reason, shipment: shipment, in: unit)
        try await settle(after, in: unit)
        return Audited(
            try await OrderDetail.load(after, in: unit),
            event: AuditRecord(
                action: Self.action, tenantID: before.tenantID, targetType: "order", targetID: orderID.text,
                reason: reason,
                before: try before.snapshot,
                after: try after.snapshot))
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

/// The partner accepts a paid order (`orders.accept`): it will fulfil it.
package struct AcceptOrder: OrderMove {
    package static let action: Action = "orders.accept"
    let orderID: UUID
    var target: Order.Status { .accepted }
    package init(orderID: UUID) { self.orderID = orderID }
}

/// The partner ships an accepted order (`orders.ship`, carrier and tracking number required):
/// the card authorization is captured first (a `PaymentMove`; refused: 409 `capture_failed`, the
/// order stays accepted — cancel it instead).
package struct ShipOrder: PaymentMove {
    package static let action: Action = "orders.ship"
    static let operation = PaymentOperation.capture
    static let refusal = "capture_failed"
    let orderID: UUID
    let carrier: String
    let trackingNumber: String
    let payments: any PaymentGateway
    var target: Order.Status { .shipped }

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
        var validation = Validation()
        validation.text(carrier, "carrier", max: 100)
        validation.text(trackingNumber, "tracking_number", max: 100)
        try validation.check()
        return (carrier, trackingNumber)
    }
}

/// The partner records a shipped order's delivery (`orders.deliver`).
package struct DeliverOrder: OrderMove {
    package static let action: Action = "orders.deliver"
    let orderID: UUID
    var target: Order.Status { .delivered }
    package init(orderID: UUID) { self.orderID = orderID }
}

/// The partner cancels an order before it ships (`orders.cancel`, reason required): the card
/// authorization voided first (a `PaymentMove`; refused: 409 `void_refused`), then stock back and
/// FitPoints back to the customer.
package struct CancelOrder: ReasonedPaymentMove {
    package static let action: Action = "orders.cancel"
    static let operation = PaymentOperation.void
    static let refusal = "void_refused"
    let orderID: UUID
    let reason: String?
    let payments: any PaymentGateway
    var target: Order.Status { .cancelled }

    package init(orderID: UUID, reason: String?, payments: any PaymentGateway) {
        (self.orderID, self.reason, self.payments) = (
            orderID, reason?.trimmingCharacters(in: .whitespacesAndNewlines), payments
        )
    }

    func precheck() throws { _ = try requireReason(reason) }

    /// An authorization, or a payment the provider is still deciding (voided so it never completes).
    func needsProvider(_ payment: Payment) -> Bool { payment.status == .authorized || payment.status == .pending }

    func settle(_ order: Order, in unit: UnitOfWork) async throws {
        try await OrderStatus.giveBack(order, reason: "order cancelled: \(reason ?? "")", in: unit)
    }
}

/// The partner refunds a shipped or delivered order (`orders.refund`, reason required): what is
/// left of the capture refunded at the provider first (a `PaymentMove`; refused: 409
/// `refund_refused`), then FitPoints back to the customer. Stock is not restored (returned goods
/// are counted back by an update).
package struct RefundOrder: ReasonedPaymentMove {
    package static let action: Action = "orders.refund"
    static let operation = PaymentOperation.refund
    static let refusal = "refund_refused"
    let orderID: UUID
    let reason: String?
    let payments: any PaymentGateway
    var target: Order.Status { .refunded }

    package init(orderID: UUID, reason: String?, payments: any PaymentGateway) {
        (self.orderID, self.reason, self.payments) = (
            orderID, reason?.trimmingCharacters(in: .whitespacesAndNewlines), payments
        )
    }

    func needsProvider(_ payment: Payment) -> Bool {
        payment.status == .captured && payment.capturedCents > payment.refundedCents
    }

    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? {
        _ = try requireReason(reason)  // after the state check, as it always was
        return nil
    }

    func settle(_ order: Order, in unit: UnitOfWork) async throws {
        try await OrderStatus.returnFitPoints(of: order, reason: "order refunded: \(reason ?? "")", in: unit)
    }
}
