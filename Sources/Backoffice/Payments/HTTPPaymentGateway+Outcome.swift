import BackofficePlatform
import Foundation

extension HTTPPaymentGateway {
    /// A PaymentIntent's or Refund's status as our outcome. `canceled` is the success of a void
    /// and a refusal of everything else (a cancelled payment is never authorized or captured).
    static func outcome(_ answer: Answer, voiding: Bool = false) -> PaymentOutcome {
        switch answer {
        case .cardError(let code): return .declined(code: code)
        case .object(let object):
            let id = object["id"] as? String ?? ""
            switch object["status"] as? String {
            case "requires_capture", "succeeded": return .succeeded(id: id)
            case "canceled": return voiding ? .succeeded(id: id) : .declined(code: "canceled")
            case "processing", "requires_action", "pending": return .pending(id: id)
            default:
                let error = object["last_payment_error"] as? [String: Any]
                return .declined(code: (error?["code"] as? String) ?? "payment_failed")
            }
        }
    }

    /// What the provider answered: an object, or a card error (a verdict).
    enum Answer {
        case object([String: Any])
        case cardError(String)
    }
}
