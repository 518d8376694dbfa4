import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Account rules (pure)")
struct AccountRulesTests {
    @Test("consecutive failures lock at the threshold; a success resets the count")
    func lockout() {
        let rule = LockoutRule(threshold: 3)
        #expect(rule.outcome(failures: 0, succeeded: false, status: .active) == .count(1))
        #expect(rule.outcome(failures: 1, succeeded: false, status: .active) == .count(2))
        #expect(rule.outcome(failures: 2, succeeded: false, status: .active) == .lock(failures: 3))
        #expect(rule.outcome(failures: 2, succeeded: true, status: .active) == .count(0))
        #expect(
            rule.outcome(failures: 3, succeeded: false, status: .locked) == .count(3),
            "on a locked account a failure is evidence only: the count does not grow (no audit flood)")
        #expect(
            rule.outcome(failures: 3, succeeded: true, status: .locked) == .count(3),
            "nor does a success change a locked account")
    }

    @Test("the threshold comes from the policy, not a constant")
    func thresholdFromPolicy() {
        #expect(LockoutRule(threshold: 1).outcome(failures: 0, succeeded: false, status: .active) == .lock(failures: 1))
        #expect(LockoutRule(threshold: 5).outcome(failures: 3, succeeded: false, status: .active) == .count(4))
    }

    @Test(
        "legal transitions",
        arguments: [
            (AccountMove.lock, AccountStatus.active, false, AccountStatus.locked),
            (.unlock, .locked, true, .active),
            (.delete, .active, false, .deleted),
            (.delete, .locked, true, .deleted),
            (.restore, .deleted, false, .active),
            (.restore, .deleted, true, .locked),
        ])
    func legal(transition: AccountMove, from: AccountStatus, openLock: Bool, to: AccountStatus) {
        #expect(transition.target(from: from, hasOpenLock: openLock) == to)
    }

    @Test(
        "no-ops and illegal moves are refused",
        arguments: [
            (AccountMove.lock, AccountStatus.locked), (.lock, .deleted), (.unlock, .active), (.unlock, .deleted),
            (.delete, .deleted), (.restore, .active), (.restore, .locked),
        ])
    func illegal(transition: AccountMove, from: AccountStatus) {
        #expect(transition.target(from: from, hasOpenLock: from == .locked) == nil)
    }

    @Test("each account move names its action, which is the permission a TransitionAccount call needs")
    func moveActions() {
        #expect(
            AccountMove.allCases.map(\.action.rawValue) == [
                "accounts.lock", "accounts.unlock", "accounts.delete", "accounts.restore",
            ])
        for move in AccountMove.allCases {
            #expect(TransitionAccount(customerID: UUID(), move: move, reason: "r").permission == move.action)
        }
    }

    @Test("PII masking keeps the domain, hides the person")
    func masking() {
        #expect(PIIMask.email("ada.lovelace@example.com") == "a***@example.com")
        #expect(PIIMask.email("nonsense") == "***")
        #expect(PIIMask.name("Ada Lovelace") == "A***")
    }
}
