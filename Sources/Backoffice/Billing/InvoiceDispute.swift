import BackofficePlatform
import Foundation

/// A dispute (chargeback) of a paid subscription invoice, from the provider's signed webhook
/// (`ReceivePaymentWebhook`, in its transaction and audit event): `dispute.created` records it
/// (`needs_response`, the amount disputed — all that is left of the invoice when none is given —
/// and the reason); `dispute.closed` records how it ended (`won` or `lost`). A dispute of a payment
/// no invoice holds is `unknown_payment`; a repeat of what is recorded changes nothing.
enum InvoiceDispute {
    /// The outcome (`dispute_opened`, `dispute_won`, `dispute_lost`, `already_applied`,
    /// `unknown_payment`, `ignored_type`) and the invoice concerned.
    static func apply(_ event: PaymentEvent, provider: String, in unit: UnitOfWork) async throws -> (String, UUID?) {
        let status: String
        switch (event.type, event.status) {
        case ("dispute.created", _): status = "needs_response"
        case ("dispute.closed", "won"?): status = "won"
        case ("dispute.closed", "lost"?): status = "lost"
        default: return ("ignored_type", nil)
        }
        let invoice: (UUID, Int64, Int64, String?)? = try await unit.first(
            """
            SELECT id, amount_cents, refunded_cents, dispute_status FROM invoices
            WHERE provider = \(provider) AND provider_payment_id = \(event.paymentID) AND status = 'paid'
            FOR UPDATE
            """
        ) { try $0.decode((UUID, Int64, Int64, String?).self) }
        guard let (id, amount, refunded, current) = invoice else { return ("unknown_payment", nil) }
        guard current != status, status == "needs_response" || current == "needs_response" else {
            return ("already_applied", id)
        }
        let disputed = min(max(event.amountCents ?? (amount - refunded), 1), amount)
        try await unit.execute(
            """
            UPDATE invoices SET dispute_status = \(status),
                disputed_cents = coalesce(disputed_cents, \(disputed)),
                dispute_reason = coalesce(\(event.reason.map { String($0.prefix(100)) }), dispute_reason),
                disputed_at = coalesce(disputed_at, \(unit.now)), updated_at = \(unit.now)
            WHERE id = \(id)
            """)
        return (status == "needs_response" ? "dispute_opened" : "dispute_" + status, id)
    }
}
