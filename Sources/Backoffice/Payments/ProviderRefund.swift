import BackofficePlatform
import Foundation

/// A refund the provider is asked for, an invoice's or an order's: what the call needs (no
/// secret), kept with the request's idempotency record until its verdict is recorded.
package struct ProviderRefund: Codable, Sendable {
    package let refundID: UUID
    package let providerPaymentID: String
    package let amountCents: Int64

    /// The key the provider deduplicates it on: one per refund, so each is made once however often
    /// it is asked (a retry, reconciliation), and several refunds of one payment each count.
    var key: String { "refund:" + refundID.text }

    /// The provider asked to refund `amountCents` of the payment under `key`.
    func call(_ payments: any PaymentGateway) async throws -> PaymentOutcome {
        try await payments.call {
            try await $0.refund(paymentID: providerPaymentID, amountCents: amountCents, idempotencyKey: key)
        }
    }
}
