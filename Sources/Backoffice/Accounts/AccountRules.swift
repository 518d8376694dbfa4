import BackofficePlatform
import Foundation

/// A customer account's status.
package enum AccountStatus: String, Sendable, Codable, CaseIterable {
    case active, locked, deleted
}

/// A manager's move of an account (`TransitionAccount`), as a state machine (pure).
package enum AccountMove: String, Sendable, CaseIterable {
    case lock, unlock, delete, restore

    /// The permission of `policies/access.yaml` the move needs, which is also the action its audit
    /// event records.
    package var action: Action {
        switch self {
        case .lock: "accounts.lock"
        case .unlock: "accounts.unlock"
        case .delete: "accounts.delete"
        case .restore: "accounts.restore"
        }
    }

    /// The status after the move, or nil when it is illegal (or a no-op) from `status`.
    /// - Parameter hasOpenLock: restoring an account that still has an open lock returns it to `locked`.
    package func target(from status: AccountStatus, hasOpenLock: Bool) -> AccountStatus? {
        switch (self, status) {
        case (.lock, .active): .locked
        case (.unlock, .locked): .active
        case (.delete, .active), (.delete, .locked): .deleted
        case (.restore, .deleted): hasOpenLock ? .locked : .active
        default: nil
        }
    }
}

/// The lockout rule of `policies/security.yaml`: consecutive failed logins lock the account.
package struct LockoutRule: Sendable {
    package let threshold: Int

    package init(threshold: Int) { self.threshold = threshold }

    /// What a reported login attempt does to an account.
    package enum Outcome: Equatable, Sendable {
        /// Record the new consecutive-failure count; nothing else changes.
        case count(Int)
        /// The count reached the threshold: lock with reason `too_many_failed_logins`.
        case lock(failures: Int)
    }

    /// - Parameters:
    ///   - failures: consecutive failures before this attempt.
    ///   - succeeded: whether this attempt succeeded (a success resets the count).
    ///   - status: the account's status; only an active account can be locked by the rule. On a
    ///     locked account nothing changes (the attempt is kept as evidence only), so an attacker
    ///     hammering a locked account neither grows its count nor floods the audit log.
    package func outcome(failures: Int, succeeded: Bool, status: AccountStatus) -> Outcome {
        guard status == .active else { return .count(failures) }
        if succeeded { return .count(0) }
        let now = failures + 1
        if now >= threshold { return .lock(failures: now) }
        return .count(now)
    }

    /// The reason recorded on a lock made by this rule.
    package static let reason = "too_many_failed_logins"
}

/// The appeal state machine: open → upheld | lifted.
package enum AppealStatus: String, Sendable, Codable {
    case open, upheld, lifted
}

/// Masks customer PII for roles that must not see it (auditors): `ada@example.com` → `a***@example.com`.
package enum PIIMask {
    package static func email(_ email: String) -> String {
        guard let at = email.firstIndex(of: "@"), at > email.startIndex else { return "***" }
        return String(email[email.startIndex]) + "***" + email[at...]
    }

    package static func name(_ name: String) -> String {
        guard let first = name.first else { return "" }
        return String(first) + "***"
    }

    /// Any other personal text (an address line, a postal code, a tax id): its first character.
    package static func text(_ text: String) -> String { name(text) }

    /// A postal address with its street lines and postal code masked (city, region and country kept).
    package static func address(_ address: ShopAddress) -> ShopAddress {
        var masked = address
        masked.line1 = text(address.line1)
        masked.line2 = address.line2.map(text)
        masked.postalCode = text(address.postalCode)
        return masked
    }
}
