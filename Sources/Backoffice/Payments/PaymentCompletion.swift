import BackofficePlatform
import Foundation

/// The one way a pending payment completes, whoever learns the verdict (webhook, reconciliation).
enum PaymentCompletion {
    /// A pending payment succeeded: authorized, and its order paid (returned). Nil when it was
    /// not pending (already completed by another path): nothing changes.
    static func succeeded(_ payment: Payment, _ order: Order, in unit: UnitOfWork) async throws -> Order? {
        guard payment.status == .pending, order.status == .pendingPayment else { return nil }
        try await Payment.record(payment.id, status: .authorized, authorizedCents: payment.amountCents, in: unit)
        return try await OrderStatus.move(order, to: .paid, reason: nil, shipment: nil, in: unit)
    }

    /// A pending payment failed: recorded, and its order `payment_failed` (stock and FitPoints
    /// back; returned). Nil when it was not pending.
    static func failed(_ payment: Payment, _ order: Order, code: String, in unit: UnitOfWork) async throws -> Order? {
        guard payment.status == .pending, order.status == .pendingPayment else { return nil }
        return try await fail(payment, order, code: code, in: unit)
    }

    /// The provider's verdict on an authorization the back office asked for (`authorizing`), by
    /// whoever learned it (the checkout's own call, reconciliation): authorized → the order paid;
    /// pending → its webhook will tell; declined, or `nil` (the provider made no payment for it) →
    /// the payment failed and the order `payment_failed`, its stock and FitPoints given back.
    /// Returns the order after; nil when the payment is no longer `authorizing` (another path
    /// recorded a verdict first): nothing changes.
    static func authorization(_ verdict: PaymentOutcome?, _ payment: Payment, _ order: Order, in unit: UnitOfWork)
        async throws -> Order?
    {
        guard payment.status == .authorizing, order.status == .pendingPayment else { return nil }
        switch verdict {
        case .succeeded(let id):
            try await Payment.record(
                payment.id, status: .authorized, authorizedCents: payment.amountCents, providerPaymentID: id, in: unit)
            return try await OrderStatus.move(order, to: .paid, reason: nil, shipment: nil, in: unit)
        case .pending(let id):
            try await Payment.record(payment.id, status: .pending, providerPaymentID: id, in: unit)
            return order
        case .declined(let code): return try await fail(payment, order, code: code, in: unit)
        case nil: return try await fail(payment, order, code: "not_attempted", in: unit)
        }
    }

    /// Records the payment failed with `code` and the order `payment_failed`, giving back its
    /// stock and FitPoints.
    private static func fail(_ payment: Payment, _ order: Order, code: String, in unit: UnitOfWork) async throws
        -> Order
    {
        let code = String(code.prefix(100))
        try await Payment.record(payment.id, status: .failed, failureCode: code, in: unit)
        let after = try await OrderStatus.move(
            order, to: .paymentFailed, reason: "payment failed: \(code)", shipment: nil, in: unit)
        try await OrderStatus.giveBack(after, reason: "payment failed: \(code)", in: unit)
        return after
    }
}
