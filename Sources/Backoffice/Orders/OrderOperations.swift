import Foundation
import PostgresNIO

/// A partner's move of one of its orders (`orders.accept`, `orders.ship`, …): the order locked,
/// the move checked against `OrderTransition` (409 with the current state), the change and its
/// audit event in one transaction. Another partner's order is 404.
protocol OrderMove: AuditedOperation where Output == OrderDetail {
    var orderID: UUID { get }
    var target: Order.Status { get }
    var reason: String? { get }
    /// Checks of the request alone, before the order is read (a required reason).
    func precheck() throws
    /// What the move does before the status changes (checks, payment calls); returns the
    /// carrier and tracking number to record, if any.
    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)?
    /// What follows the status change in the same transaction (stock and FitPoints given back).
    func settle(_ order: Order, in unit: UnitOfWork) async throws
}

extension OrderMove {
    var reason: String? { nil }
    func precheck() throws {}
    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? { nil }
    func settle(_ order: Order, in unit: UnitOfWork) async throws {}

    public func perform(in unit: UnitOfWork) async throws -> Audited<OrderDetail> {
        try precheck()
        let before = try await Order.fetch(orderID, forUpdate: true, in: unit)
        try OrderTransition.check(before, to: target)
        let shipment = try await apply(to: before, in: unit)
        let after = try await OrderStatus.move(before, to: target, reason: reason, shipment: shipment, in: unit)
        try await settle(after, in: unit)
        return Audited(
            try await OrderDetail.load(after, in: unit),
            event: AuditRecord(
                action: Self.action, tenantID: before.tenantID, targetType: "order", targetID: orderID.text, reason: reason, before: before.snapshot,
                after: after.snapshot))
    }
}

/// Writing an order's new status, and the reversals a cancelled or refunded order needs.
enum OrderStatus {
    /// Records `order`'s move to `status` (a new version).
    static func move(_ order: Order, to status: Order.Status, reason: String?, shipment: (carrier: String, tracking: String)?, in unit: UnitOfWork)
        async throws -> Order
    {
        guard
            let after = try await unit.first(
                """
                UPDATE orders o SET status = \(status.rawValue), status_reason = coalesce(\(reason), status_reason),
                    carrier = coalesce(\(shipment?.carrier), carrier), tracking_number = coalesce(\(shipment?.tracking), tracking_number),
                    updated_at = \(unit.now), version = version + 1
                WHERE o.id = \(order.id) RETURNING \(unescaped: Order.columns)
                """, as: Order.self)
        else { throw DomainError.notFound("Order \(order.id.text)") }
        return after
    }

    /// Puts the order's units back in stock (goods locked in id order, as checkout locks them).
    static func releaseStock(of order: Order, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            WITH locked AS (
                SELECT id FROM goods WHERE id IN (SELECT good_id FROM order_lines WHERE order_id = \(order.id)) ORDER BY id FOR UPDATE
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
            "SELECT return_order_fitpoints(\(order.id), \(unit.principal.operatorID), \(reason), \(unit.now))", { try $0.decode(Int64.self) })
    }

    /// Voids the order's card authorization (or pending payment) at the provider.
    /// - Throws: `conflict(payment_in_progress)` while the checkout's authorization awaits its verdict.
    static func voidAuthorization(of order: Order, payments: any PaymentValidator, in unit: UnitOfWork) async throws {
        let payment = try await Payment.of(order: order.id, forUpdate: true, in: unit)
        guard payment?.status != .authorizing else {
            throw DomainError.conflict(
                code: "payment_in_progress", detail: "The order's payment is being authorized; cancel it once its verdict is in.")
        }
        guard let payment, let providerID = payment.providerPaymentID,
            payment.status == .authorized || payment.status == .pending
        else { return }
        switch try await payments.call({ try await $0.void(paymentID: providerID, idempotencyKey: "void:\(payment.id.text)") }) {
        case .declined(let code): throw DomainError.conflict(code: "void_refused", detail: "The payment provider refused to void: \(code).")
        case .succeeded, .pending: try await Payment.record(payment.id, status: .voided, in: unit)
        }
    }

    /// What a cancelled order gives back: its units to stock, its FitPoints to the customer.
    static func giveBack(_ cancelled: Order, reason: String, in unit: UnitOfWork) async throws {
        try await releaseStock(of: cancelled, in: unit)
        try await returnFitPoints(of: cancelled, reason: "order cancelled: \(reason)", in: unit)
    }

    /// Cancels `order` (already checked): authorization voided, stock released, FitPoints given
    /// back. The path of a failed payment; a partner's cancellation is `CancelOrder`.
    static func cancel(_ order: Order, reason: String, payments: any PaymentValidator, in unit: UnitOfWork) async throws -> Order {
        try await voidAuthorization(of: order, payments: payments, in: unit)
        let after = try await move(order, to: .cancelled, reason: reason, shipment: nil, in: unit)
        try await giveBack(after, reason: reason, in: unit)
        return after
    }
}

/// The partner accepts a paid order (`orders.accept`): it will fulfil it.
public struct AcceptOrder: OrderMove {
    public static let action: Action = "orders.accept"
    let orderID: UUID
    var target: Order.Status { .accepted }
    public init(orderID: UUID) { self.orderID = orderID }
}

/// The partner ships an accepted order (`orders.ship`, carrier and tracking number required):
/// the card authorization is captured now.
public struct ShipOrder: OrderMove {
    public static let action: Action = "orders.ship"
    let orderID: UUID
    let carrier: String
    let trackingNumber: String
    let payments: any PaymentValidator
    var target: Order.Status { .shipped }

    public init(orderID: UUID, carrier: String, trackingNumber: String, payments: any PaymentValidator) {
        self.orderID = orderID
        self.carrier = carrier.trimmingCharacters(in: .whitespaces)
        self.trackingNumber = trackingNumber.trimmingCharacters(in: .whitespaces)
        self.payments = payments
    }

    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? {
        var validation = Validation()
        validation.text(carrier, "carrier", max: 100)
        validation.text(trackingNumber, "tracking_number", max: 100)
        try validation.check()
        if let payment = try await Payment.of(order: order.id, forUpdate: true, in: unit), payment.status == .authorized,
            let providerID = payment.providerPaymentID
        {
            let outcome = try await payments.call {
                try await $0.capture(paymentID: providerID, amountCents: payment.authorizedCents, idempotencyKey: "capture:\(payment.id.text)")
            }
            guard case .succeeded = outcome else {
                throw DomainError.conflict(code: "capture_failed", detail: "The payment provider refused the capture; cancel the order instead.")
            }
            try await Payment.record(payment.id, status: .captured, capturedCents: payment.authorizedCents, in: unit)
        }
        return (carrier, trackingNumber)
    }
}

/// The partner records a shipped order's delivery (`orders.deliver`).
public struct DeliverOrder: OrderMove {
    public static let action: Action = "orders.deliver"
    let orderID: UUID
    var target: Order.Status { .delivered }
    public init(orderID: UUID) { self.orderID = orderID }
}

/// The partner cancels an order before it ships (`orders.cancel`, reason required): stock back,
/// FitPoints back to the customer, the card authorization voided.
public struct CancelOrder: OrderMove {
    public static let action: Action = "orders.cancel"
    let orderID: UUID
    let reason: String?
    let payments: any PaymentValidator
    var target: Order.Status { .cancelled }

    public init(orderID: UUID, reason: String?, payments: any PaymentValidator) {
        self.orderID = orderID
        self.reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.payments = payments
    }

    func precheck() throws { _ = try requireReason(reason) }

    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? {
        try await OrderStatus.voidAuthorization(of: order, payments: payments, in: unit)
        return nil
    }

    func settle(_ order: Order, in unit: UnitOfWork) async throws {
        try await OrderStatus.giveBack(order, reason: reason ?? "", in: unit)
    }
}

/// The partner refunds a shipped or delivered order (`orders.refund`, reason required): the
/// captured amount refunded at the provider (never more than captured), FitPoints back to the
/// customer. Stock is not restored (returned goods are counted back by an update).
public struct RefundOrder: OrderMove {
    public static let action: Action = "orders.refund"
    let orderID: UUID
    let reason: String?
    let payments: any PaymentValidator
    var target: Order.Status { .refunded }

    public init(orderID: UUID, reason: String?, payments: any PaymentValidator) {
        self.orderID = orderID
        self.reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.payments = payments
    }

    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? {
        _ = try requireReason(reason)  // after the state check, as it always was
        if let payment = try await Payment.of(order: order.id, forUpdate: true, in: unit), payment.status == .captured,
            let providerID = payment.providerPaymentID
        {
            let amount = payment.capturedCents - payment.refundedCents
            let outcome = try await payments.call {
                try await $0.refund(paymentID: providerID, amountCents: amount, idempotencyKey: "refund:\(payment.id.text)")
            }
            guard case .succeeded = outcome else {
                throw DomainError.conflict(code: "refund_refused", detail: "The payment provider refused the refund.")
            }
            try await Payment.record(payment.id, status: .refunded, refundedCents: payment.capturedCents, in: unit)
        }
        return nil
    }

    func settle(_ order: Order, in unit: UnitOfWork) async throws {
        try await OrderStatus.returnFitPoints(of: order, reason: "order refunded: \(reason ?? "")", in: unit)
    }
}
