import Crypto
import Foundation
import Synchronization

/// The embedded payment provider: no network, deterministic outcomes chosen by the test numbers
/// Stripe publishes (docs/operations.md, "Payments"), so every path can be exercised on purpose.
///
/// | number | outcome |
/// |---|---|
/// | card `4242424242424242` (and any other card) | authorized |
/// | card `4000000000000002` | declined (`card_declined`) |
/// | card `4000000000009995` | declined (`insufficient_funds`) |
/// | card `4000002500003155` | pending: the verdict comes by webhook (3-D Secure) |
/// | card `4000000000000119` | provider error (no verdict) |
/// | card `4000000000000408` | provider timeout (no verdict) |
/// | bank account `000123456789` (and any other well-formed account) | verified |
/// | bank account `000111111113` | failed (`account_closed`) |
/// | bank account `000111111116` | failed (`no_account`) |
/// | bank account `000555555559` | provider error (no verdict) |
/// | bank account `000999999991` | provider timeout (no verdict) |
///
/// Ids are derived from the idempotency key, so a repeated call answers the same payment.
public struct SimulatedPaymentGateway: PaymentGateway {
    public let provider = "simulated"

    public init() {}

    public static let approvedCard = "4242424242424242"
    public static let declinedCard = "4000000000000002"
    public static let insufficientFundsCard = "4000000000009995"
    public static let providerErrorCard = "4000000000000119"
    public static let pendingCard = "4000002500003155"
    public static let timeoutCard = "4000000000000408"
    public static let verifiedAccount = "000123456789"
    public static let closedAccount = "000111111113"
    public static let missingAccount = "000111111116"
    public static let providerErrorAccount = "000555555559"
    public static let timeoutAccount = "000999999991"

    public func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification {
        switch account.accountNumber {
        case Self.closedAccount: return .failed("account_closed")
        case Self.missingAccount: return .failed("no_account")
        case Self.providerErrorAccount: throw PaymentProviderError.unavailable("simulated provider error")
        case Self.timeoutAccount: throw PaymentProviderError.timeout
        default: return .verified("ba_sim_" + Self.digest(account.routingNumber + ":" + account.accountNumber))
        }
    }

    public func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome {
        switch request.cardNumber {
        case Self.declinedCard: return .declined(code: "card_declined")
        case Self.insufficientFundsCard: return .declined(code: "insufficient_funds")
        case Self.providerErrorCard: throw PaymentProviderError.unavailable("simulated provider error")
        case Self.timeoutCard: throw PaymentProviderError.timeout
        case Self.pendingCard: return Self.made.remember(.pending(id: "pi_sim_" + Self.digest(request.idempotencyKey)), for: request.reference)
        default: return Self.made.remember(.succeeded(id: "pi_sim_" + Self.digest(request.idempotencyKey)), for: request.reference)
        }
    }

    /// The payments this process authorized, by reference (the simulated provider's own record;
    /// it forgets them when the process ends, so a reservation left by a crash finds none).
    private static let made = MadePayments()

    public func find(reference: String) async throws -> PaymentOutcome? { Self.made.outcome(for: reference) }

    public func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        .succeeded(id: paymentID)
    }

    public func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        .succeeded(id: "re_sim_" + Self.digest(idempotencyKey))
    }

    public func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome {
        .succeeded(id: paymentID)
    }

    /// Every payment has succeeded by the time it is asked about (a pending 3-D Secure payment
    /// whose webhook never came completes by reconciliation).
    public func status(of paymentID: String) async throws -> PaymentOutcome {
        .succeeded(id: paymentID)
    }

    /// 24 hex digits of SHA-256: stable ids for the same input.
    static func digest(_ text: String) -> String {
        hex(Array(SHA256.hash(data: Data(text.utf8)).prefix(12)))
    }
}

/// The simulated provider's record of what it authorized, by reference.
private final class MadePayments: Sendable {
    private let outcomes = Mutex<[String: PaymentOutcome]>([:])

    func remember(_ outcome: PaymentOutcome, for reference: String) -> PaymentOutcome {
        outcomes.withLock { $0[reference] = outcome }
        return outcome
    }

    func outcome(for reference: String) -> PaymentOutcome? { outcomes.withLock { $0[reference] } }
}
