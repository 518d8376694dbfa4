import BackofficePlatform
import Foundation

/// The payment provider, behind one protocol: bank-account verification for shop payouts, and
/// card payments (authorize, capture, refund, void) for checkout. `SimulatedPaymentGateway` is
/// the embedded default; an HTTP implementation speaks a real provider's REST API.
///
/// Every money-moving call carries an idempotency key the provider deduplicates on, so a retried
/// call never moves money twice. A call that could not reach a verdict throws
/// `PaymentProviderError` (the caller answers 503 and changes nothing); a verdict — a decline, a
/// failed verification — is a value, not an error.
package protocol PaymentGateway: Sendable {
    /// The provider's name, as webhooks name it (`/v1/payments/webhooks/{provider}`).
    var provider: String { get }
    func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification
    func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome
    /// Charges a saved payment method at once, the customer not present (a subscription's invoice).
    func charge(_ request: PaymentCharge) async throws -> PaymentOutcome
    func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome
    func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome
    func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome
    /// Where a payment stands now (reconciliation asks when a webhook never came).
    func status(of paymentID: String) async throws -> PaymentOutcome
    /// The payment authorized under `reference` (the order's id), nil when the provider made none:
    /// reconciliation asks when a checkout ended between its reservation and its verdict.
    func find(reference: String) async throws -> PaymentOutcome?
    /// The payments the provider made since `since` (reconciliation compares them with the
    /// invoices), with how far back its record reaches.
    func charges(since: Date) async throws -> ProviderCharges
    /// False while calls are known to fail at once (an open circuit): a checkout is then refused
    /// before anything is reserved.
    var isAcceptingCalls: Bool { get }
    /// The longest a call may take, retries included: a reservation younger than this may still
    /// have its call under way, so reconciliation leaves it alone.
    var longestCall: Duration { get }
}

extension PaymentGateway {
    package var isAcceptingCalls: Bool { true }
    package var longestCall: Duration { .zero }
}

/// A US bank account as a shop gives it for payouts. Held only while it is verified: the
/// provider keeps the number, the back office keeps its reference and last four digits.
package struct BankAccount: Sendable {
    package var holderName: String
    package var routingNumber: String
    package var accountNumber: String

    package init(holderName: String, routingNumber: String, accountNumber: String) {
        (self.holderName, self.routingNumber, self.accountNumber) = (holderName, routingNumber, accountNumber)
    }

    /// The last four digits, the only part of the number that is kept.
    package var last4: String { String(accountNumber.filter(\.isNumber).suffix(4)) }

    /// Whether the routing number is an ABA routing transit number: nine digits whose weighted
    /// sum (3, 7, 1, repeated) is a multiple of ten.
    package var hasValidRoutingNumber: Bool {
        let digits = routingNumber.compactMap(\.wholeNumberValue)
        guard digits.count == 9, routingNumber.count == 9 else { return false }
        let weights = [3, 7, 1, 3, 7, 1, 3, 7, 1]
        return zip(digits, weights).reduce(0) { $0 + $1.0 * $1.1 } % 10 == 0
    }

    /// Whether the account number is 4–17 digits (the US range).
    package var hasValidAccountNumber: Bool {
        (4...17).contains(accountNumber.count) && accountNumber.allSatisfy { $0.isASCII && $0.isNumber }
    }
}

/// The provider's verdict on a bank account.
package struct BankAccountVerification: Sendable, Equatable {
    /// The provider's reference to the verified account (payouts go to it); nil when it failed.
    package var reference: String?
    /// Why it failed (`account_closed`, `no_account`, …); nil when it verified.
    package var failureCode: String?

    package var verified: Bool { reference != nil }

    package static func verified(_ reference: String) -> Self { Self(reference: reference, failureCode: nil) }
    package static func failed(_ code: String) -> Self { Self(reference: nil, failureCode: code) }
}

/// A card payment to authorize: the amount in US cents, the card, and the key the provider
/// deduplicates on (the same key never authorizes twice).
package struct PaymentAuthorization: Sendable {
    package var amountCents: Int64
    package var cardNumber: String
    package var idempotencyKey: String
    /// What the payment is for (the order id), echoed by the provider's webhooks.
    package var reference: String

}

/// A charge of a saved payment method, captured at once with the customer not present (Stripe's
/// off-session PaymentIntent): the amount in US cents, the provider's token for the method (never
/// card data), the key the provider deduplicates on, and what the charge is for (an invoice's id).
package struct PaymentCharge: Sendable {
    package var amountCents: Int64
    package var paymentMethod: String
    package var idempotencyKey: String
    package var reference: String

    package init(amountCents: Int64, paymentMethod: String, idempotencyKey: String, reference: String) {
        (self.amountCents, self.paymentMethod, self.idempotencyKey, self.reference) = (
            amountCents, paymentMethod, idempotencyKey, reference
        )
    }

    /// Whether `token` has the shape of a provider's payment method token: `pm_` and 1–64 letters,
    /// digits or underscores (what a customer's app sends; card numbers never are one).
    package static func isPaymentMethod(_ token: String) -> Bool {
        token.hasPrefix("pm_") && (4...67).contains(token.count)
            && token.dropFirst(3).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}

/// The provider's verdict on a payment call.
package enum PaymentOutcome: Sendable, Equatable {
    /// Done: the provider's payment id (`pi_…`) or refund id (`re_…`).
    case succeeded(id: String)
    /// Accepted, with the verdict to come by webhook (the customer's bank is still deciding):
    /// the provider's payment id.
    case pending(id: String)
    /// Refused, with the provider's reason mapped to ours (`card_declined`, `insufficient_funds`).
    case declined(code: String)
}

/// A payment call that reached no verdict: the provider timed out or failed. Nothing may be
/// assumed about money; the caller answers 503 and a retry (same idempotency key) is safe.
package enum PaymentProviderError: Error, Equatable, CustomStringConvertible {
    case timeout
    case unavailable(String)

    package var description: String {
        switch self {
        case .timeout: "the payment provider did not answer in time"
        case .unavailable(let detail): "the payment provider failed: \(detail)"
        }
    }
}

/// A payment as the provider's own record has it: its id, what it is for (the reference the back
/// office gave it), whether money moved, how much was received and how much of it refunded.
package struct ProviderCharge: Sendable, Equatable {
    package var id: String
    package var reference: String?
    /// Money was taken (captured): the only payments reconciliation counts.
    package var succeeded: Bool
    package var amountCents: Int64
    package var refundedCents: Int64
    package var createdAt: Date

    package init(
        id: String, reference: String?, succeeded: Bool, amountCents: Int64, refundedCents: Int64, createdAt: Date
    ) {
        (self.id, self.reference, self.succeeded) = (id, reference, succeeded)
        (self.amountCents, self.refundedCents, self.createdAt) = (amountCents, refundedCents, createdAt)
    }
}

/// The provider's payments since a moment, and the earliest moment its record covers: a record
/// that begins later (the simulated provider's, kept while its process runs) narrows what is
/// compared, so a payment it never knew is not reported missing.
package struct ProviderCharges: Sendable {
    package var charges: [ProviderCharge]
    package var coveredSince: Date?

    package init(_ charges: [ProviderCharge], coveredSince: Date? = nil) {
        (self.charges, self.coveredSince) = (charges, coveredSince)
    }
}
