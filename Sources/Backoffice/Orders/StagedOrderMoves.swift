import BackofficePlatform
import Foundation

/// A partner's move whose payment the provider must act on first (ship → capture, cancel → void,
/// refund → refund). A staged operation: no transaction waits on the provider. Another partner's
/// order is 404.
///
/// 1. `reserve`, one transaction: the order locked and the move checked (409 with the current
///    state; 409 `payment_in_progress` while another provider operation or the checkout's
///    authorization is under way). When the payment needs nothing from the provider the move
///    completes here. Otherwise the payment is marked with the operation under way and what the
///    move records once it succeeds (audited), and the order stays as it is.
/// 2. `call`: the operation at the provider under a key derived from the payment, so it is done
///    once however often it is asked (a retry, reconciliation).
/// 3. `record`, a second transaction: done → the payment's new state, the order moved and what
///    follows (stock and FitPoints back); refused → the payment as it was, the order unchanged,
///    answered 409 with the operation's code. Reconciliation finishes an operation a crash left
///    under way (`ReconcilePayments`).
protocol StagedOrderMove: StagedOperation
where Reservation == PaymentStep, Verdict == PaymentOutcome, Output == MoveOutcome {
    /// The move (one that calls the provider): its target status and its action, the permission
    /// and the audit events' action, what the provider is asked and its refusal's code.
    static var move: OrderMove { get }
    var orderID: UUID { get }
    var reason: String? { get }
    var payments: any PaymentGateway { get }
    /// Checks of the request alone, before the order is read (a required reason).
    func precheck() throws
    /// What the move checks before the status changes; returns the carrier and tracking number
    /// to record, if any.
    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)?
    /// What follows the status change in the same transaction (stock and FitPoints given back).
    func settle(_ order: Order, in unit: UnitOfWork) async throws
    /// Whether `payment` needs the provider for this move (an authorization to capture or void, a capture to refund).
    func needsProvider(_ payment: Payment) -> Bool
    /// The same move rebuilt from a step under way (reconciliation finishes it).
    init(resuming step: PaymentStep, payments: any PaymentGateway)
}

extension StagedOrderMove {
    package static var action: Action { move.action }
    /// What the provider is asked to do (a staged move's move always calls it).
    static var operation: PaymentOperation { move.provider!.operation }
    /// The code a refusal of the operation is answered with (409).
    static var refusal: String { move.provider!.refusal }
    var target: Order.Status { Self.move.target }
    var reason: String? { nil }
    func precheck() throws {}
    func apply(to order: Order, in unit: UnitOfWork) async throws -> (carrier: String, tracking: String)? { nil }
    func settle(_ order: Order, in unit: UnitOfWork) async throws {}
}

/// A provider operation under way for an order's move: what the call needs and what the move
/// records once it succeeds (no secret: kept with the request's idempotency record).
package struct PaymentStep: Codable, Sendable {
    package let orderID: UUID
    package let paymentID: UUID
    package let providerPaymentID: String
    package let operation: PaymentOperation
    package let amountCents: Int64
    package var carrier: String? = nil
    package var trackingNumber: String? = nil
    package var reason: String? = nil

    /// The key the provider deduplicates the operation on: one capture, void or refund per payment.
    var providerKey: String { "\(operation.rawValue):\(paymentID.text)" }
}

/// A move's answer: the order after it, and the provider's refusal code when it refused.
package struct MoveOutcome: Sendable {
    package let detail: OrderDetail
    package let refused: String?
}

extension StagedOrderMove {
    /// What a provider's refusal of the move is answered with: 409 with the move's code.
    static var refusedByProvider: DomainError {
        .conflict(
            code: refusal, detail: "The payment provider refused to \(operation.rawValue); the order is unchanged.")
    }
}

extension StagedOrderMove {
    package func ready() throws {}

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<PaymentStep, MoveOutcome>> {
        try precheck()
        let before = try await Order.fetch(orderID, forUpdate: true, in: unit)
        try OrderTransition.check(before, to: target)
        let shipment = try await apply(to: before, in: unit)
        let payment = try await Payment.of(order: orderID, forUpdate: true, in: unit)
        try Payment.requireIdle(payment)
        guard let payment, needsProvider(payment), let providerID = payment.providerPaymentID else {
            return try await complete(before, shipment: shipment, in: unit).map { .done($0) }
        }
        let step = PaymentStep(
            orderID: orderID, paymentID: payment.id, providerPaymentID: providerID, operation: Self.operation,
            amountCents: Self.operation == .refund
                ? payment.capturedCents - payment.refundedCents : payment.authorizedCents,
            carrier: shipment?.carrier, trackingNumber: shipment?.tracking, reason: reason)
        try await Payment.begin(Self.operation, detail: try AuditRecord.json(step), on: payment.id, in: unit)
        return Audited(
            .call(step),
            event: AuditRecord.order(
                before, action: Self.action, reason: "asked the payment provider to \(Self.operation.rawValue)",
                before: try before.snapshot,
                after: try before.snapshot))
    }

    package func call(_ step: PaymentStep) async throws -> PaymentOutcome {
        try await payments.call { provider in
            switch step.operation {
            case .capture:
                try await provider.capture(
                    paymentID: step.providerPaymentID, amountCents: step.amountCents, idempotencyKey: step.providerKey)
            case .void: try await provider.void(paymentID: step.providerPaymentID, idempotencyKey: step.providerKey)
            case .refund:
                try await provider.refund(
                    paymentID: step.providerPaymentID, amountCents: step.amountCents, idempotencyKey: step.providerKey)
            }
        }
    }

    package func record(_ verdict: PaymentOutcome, for step: PaymentStep, in unit: UnitOfWork) async throws -> Audited<
        MoveOutcome
    > {
        let payment = try await Payment.locked(step.paymentID, in: unit)
        let before = try await Order.fetch(step.orderID, forUpdate: true, in: unit)
        guard payment.pendingOperation == step.operation else {  // recorded first by another path
            return .unchanged(MoveOutcome(detail: try await OrderDetail.load(before, in: unit), refused: nil))
        }
        if case .declined(let code) = verdict {
            try await Payment.record(payment.id, status: payment.status, in: unit)
            return Audited(
                MoveOutcome(detail: try await OrderDetail.load(before, in: unit), refused: Self.refusal),
                event: AuditRecord.order(
                    before, action: Self.action,
                    reason: "the payment provider refused to \(step.operation.rawValue): \(code)",
                    before: try before.snapshot,
                    after: try before.snapshot))
        }
        switch step.operation {
        case .capture:
            try await Payment.record(payment.id, status: .captured, capturedCents: step.amountCents, in: unit)
        case .void: try await Payment.record(payment.id, status: .voided, in: unit)
        case .refund:
            try await Payment.record(
                payment.id, status: .refunded, refundedCents: payment.refundedCents + step.amountCents, in: unit)
        }
        let shipment = step.carrier.flatMap { carrier in step.trackingNumber.map { (carrier: carrier, tracking: $0) } }
        return try await complete(before, shipment: shipment, in: unit)
    }

    /// The move itself: the order's new status, what follows it, the audit event.
    private func complete(_ before: Order, shipment: (carrier: String, tracking: String)?, in unit: UnitOfWork)
        async throws -> Audited<MoveOutcome>
    {
        let after = try await OrderStatus.move(before, to: target, reason: reason, shipment: shipment, in: unit)
        try await settle(after, in: unit)
        return Audited(
            MoveOutcome(detail: try await OrderDetail.load(after, in: unit), refused: nil),
            event: AuditRecord.order(
                before, action: Self.action, reason: reason,
                before: try before.snapshot, after: try after.snapshot))
    }
}
