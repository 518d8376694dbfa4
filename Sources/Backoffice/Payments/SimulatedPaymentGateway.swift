import BackofficePlatform
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
/// | payment method `pm_card_visa` (and any other token) | charged |
/// | payment method `pm_card_chargeDeclined` | declined (`card_declined`) |
/// | payment method `pm_card_chargeDeclinedInsufficientFunds` | declined (`insufficient_funds`) |
/// | payment method `pm_card_authenticationRequired` | declined (`authentication_required`: off-session) |
/// | payment method `pm_sim_providerError` | provider error (no verdict) |
/// | payment method `pm_sim_timeout` | provider timeout (no verdict) |
/// | bank account `000123456789` (and any other well-formed account) | verified |
/// | bank account `000111111113` | failed (`account_closed`) |
/// | bank account `000111111116` | failed (`no_account`) |
/// | bank account `000555555559` | provider error (no verdict) |
/// | bank account `000999999991` | provider timeout (no verdict) |
///
/// Ids are derived from the idempotency key, so a repeated call answers the same payment. What it
/// made is kept in a `SimulatedPaymentRecord` (by default the process's own, forgotten when the
/// process ends), so it can be asked about and listed.
package struct SimulatedPaymentGateway: PaymentGateway {
    package let provider = "simulated"
    let made: SimulatedPaymentRecord

    package init(record: SimulatedPaymentRecord = .process) { made = record }

    package static let approvedCard = "4242424242424242"
    package static let declinedCard = "4000000000000002"
    package static let insufficientFundsCard = "4000000000009995"
    package static let providerErrorCard = "4000000000000119"
    package static let pendingCard = "4000002500003155"
    package static let timeoutCard = "4000000000000408"
    package static let approvedMethod = "pm_card_visa"
    package static let declinedMethod = "pm_card_chargeDeclined"
    package static let insufficientFundsMethod = "pm_card_chargeDeclinedInsufficientFunds"
    package static let authenticationRequiredMethod = "pm_card_authenticationRequired"
    package static let providerErrorMethod = "pm_sim_providerError"
    package static let timeoutMethod = "pm_sim_timeout"
    package static let verifiedAccount = "000123456789"
    package static let closedAccount = "000111111113"
    package static let missingAccount = "000111111116"
    package static let providerErrorAccount = "000555555559"
    package static let timeoutAccount = "000999999991"

    package func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification {
        switch account.accountNumber {
        case Self.closedAccount: return .failed("account_closed")
        case Self.missingAccount: return .failed("no_account")
        case Self.providerErrorAccount: throw PaymentProviderError.unavailable("simulated provider error")
        case Self.timeoutAccount: throw PaymentProviderError.timeout
        default: return .verified("ba_sim_" + Self.digest(account.routingNumber + ":" + account.accountNumber))
        }
    }

    package func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome {
        switch request.cardNumber {
        case Self.declinedCard: return .declined(code: "card_declined")
        case Self.insufficientFundsCard: return .declined(code: "insufficient_funds")
        case Self.providerErrorCard: throw PaymentProviderError.unavailable("simulated provider error")
        case Self.timeoutCard: throw PaymentProviderError.timeout
        case Self.pendingCard:
            return made.remember(
                .pending(id: "pi_sim_" + Self.digest(request.idempotencyKey)), request.amountCents,
                for: request.reference)
        default:
            return made.remember(
                .succeeded(id: "pi_sim_" + Self.digest(request.idempotencyKey)), request.amountCents,
                for: request.reference)
        }
    }

    package func charge(_ request: PaymentCharge) async throws -> PaymentOutcome {
        switch request.paymentMethod {
        case Self.declinedMethod: return .declined(code: "card_declined")
        case Self.insufficientFundsMethod: return .declined(code: "insufficient_funds")
        case Self.authenticationRequiredMethod: return .declined(code: "authentication_required")
        case Self.providerErrorMethod: throw PaymentProviderError.unavailable("simulated provider error")
        case Self.timeoutMethod: throw PaymentProviderError.timeout
        default:
            return made.remember(
                .succeeded(id: "pi_sim_" + Self.digest(request.idempotencyKey)), request.amountCents,
                for: request.reference)
        }
    }

    package func find(reference: String) async throws -> PaymentOutcome? { made.outcome(for: reference) }

    package func charges(since: Date) async throws -> ProviderCharges { made.charges(since: since) }

    package func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        .succeeded(id: paymentID)
    }

    package func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        made.refund(paymentID, amountCents, key: idempotencyKey)
        return .succeeded(id: "re_sim_" + Self.digest(idempotencyKey))
    }

    package func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome {
        .succeeded(id: paymentID)
    }

    /// Every payment has succeeded by the time it is asked about (a pending 3-D Secure payment
    /// whose webhook never came completes by reconciliation).
    package func status(of paymentID: String) async throws -> PaymentOutcome {
        .succeeded(id: paymentID)
    }

    /// 24 hex digits of SHA-256: stable ids for the same input.
    static func digest(_ text: String) -> String {
        hex(Array(SHA256.hash(data: Data(text.utf8)).prefix(12)))
    }
}

/// What a simulated provider made: each payment by reference and by id, with its amount and
/// refunds, timed by `clock`. The process keeps one (`process`), forgotten when it ends, so a
/// reservation left by a crash finds none; a test may keep its own, on its own clock.
package final class SimulatedPaymentRecord: Sendable {
    package static let process = SimulatedPaymentRecord()

    private struct State {
        var byReference: [String: PaymentOutcome] = [:]
        var payments: [String: ProviderCharge] = [:]
        var refundKeys: Set<String> = []
    }
    private let state = Mutex(State())
    private let clock: any WallClock
    /// When the record began: the provider knows nothing of what came before.
    let began: Date

    package init(clock: any WallClock = SystemWallClock()) {
        self.clock = clock
        began = clock.now()
    }

    func remember(_ outcome: PaymentOutcome, _ amountCents: Int64, for reference: String) -> PaymentOutcome {
        let now = clock.now()
        state.withLock { state in
            state.byReference[reference] = outcome
            let (id, succeeded) =
                switch outcome {
                case .succeeded(let id): (id, true)
                case .pending(let id): (id, false)
                case .declined: ("", false)
                }
            guard !id.isEmpty, state.payments[id] == nil else { return }
            state.payments[id] = ProviderCharge(
                id: id, reference: reference, succeeded: succeeded, amountCents: amountCents, refundedCents: 0,
                createdAt: now)
        }
        return outcome
    }

    /// A refund of `paymentID` made once per idempotency key.
    func refund(_ paymentID: String, _ amountCents: Int64, key: String) {
        state.withLock { state in
            guard state.refundKeys.insert(key).inserted else { return }
            state.payments[paymentID]?.refundedCents += amountCents
        }
    }

    func outcome(for reference: String) -> PaymentOutcome? { state.withLock { $0.byReference[reference] } }

    func charges(since: Date) -> ProviderCharges {
        let found = state.withLock { $0.payments.values.filter { $0.createdAt >= since } }
        return ProviderCharges(found.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }, coveredSince: began)
    }
}
