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

    /// A PaymentIntent of the provider's list as our record of it: money taken when `succeeded`
    /// (the amount received), the refunds its latest charge counts.
    static func charge(_ intent: [String: Any]) -> ProviderCharge? {
        guard let id = intent["id"] as? String else { return nil }
        let number = { (value: Any?) in (value as? NSNumber)?.int64Value ?? 0 }
        let latest = intent["latest_charge"] as? [String: Any]
        return ProviderCharge(
            id: id, reference: (intent["metadata"] as? [String: Any])?["reference"] as? String,
            succeeded: intent["status"] as? String == "succeeded", amountCents: number(intent["amount_received"]),
            refundedCents: number(latest?["amount_refunded"]),
            createdAt: Date(timeIntervalSince1970: Double(number(intent["created"]))))
    }

    /// What the provider answered: an object, or a card error (a verdict).
    enum Answer {
        case object([String: Any])
        case cardError(String)
    }
}
