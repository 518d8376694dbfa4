import BackofficePlatform

/// What the payment provider's side of a change can refuse; each answers its own problem+json.
package enum PaymentRefusal: DomainRefusal, Equatable {
    /// The provider reached no verdict (timed out, failed, or its circuit is open): nothing was
    /// changed, and the same request may be sent again later (503, Retry-After 30).
    case providerUnavailable(String)
    /// The provider refused the payment (`card_declined`, `insufficient_funds`): nothing was
    /// changed (402, the provider's code).
    case declined(code: String)
    /// A webhook whose signature does not verify (wrong secret, altered body, stale timestamp): 400.
    case invalidSignature

    package var problem: Problem {
        switch self {
        case .providerUnavailable:
            Problem(
                status: 503, code: "payment_provider_unavailable", title: "Payment provider unavailable",
                detail: "The payment provider did not answer; nothing was changed. Send the request again later.",
                retryAfter: 30)
        case .declined(let code):
            Problem(
                status: 402, code: code, title: "Payment declined",
                detail: "The payment provider declined the payment (\(code)); nothing was charged or changed.")
        case .invalidSignature:
            Problem(
                status: 400, code: "invalid_signature", title: "Invalid signature",
                detail:
                    """
                    The Webhook-Signature does not verify for this body, or its timestamp is more than 5 minutes \
                    away; nothing was changed.
                    """
            )
        }
    }
}
