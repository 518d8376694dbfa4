import BackofficePlatform
import Foundation

/// The web console's sessions and sign-in lockout: the `console:` section of the platform's
/// `policies/security.yaml`, which the console reads and validates itself.
package struct ConsolePolicy: DomainPolicy {
    /// A session unused this long ends.
    package let idleTimeoutMinutes: Int
    /// A session ends this long after sign-in, used or not.
    package let absoluteTimeoutHours: Int
    /// Failed sign-ins for one email within the window before it is locked out until they age out.
    package let maxFailuresPerAccount: Int
    /// Failed sign-ins from one address within the window before it is locked out.
    package let maxFailuresPerAddress: Int
    package let failureWindowMinutes: Int
    /// The roles that must sign in with a second factor (TOTP); others may set one up.
    package let secondFactorRequired: Set<String>

    /// The file is the platform's, read already; the console adds none.
    package static func files(in directory: URL) -> [String] { [] }

    package static func parse(_ texts: [String: String], directory: String) throws -> ConsolePolicy {
        let security = try PolicyDocument(texts, "security.yaml", directory: directory)
        return ConsolePolicy(
            idleTimeoutMinutes: try security.integer("console", "idle_timeout_minutes", 1...1_440),
            absoluteTimeoutHours: try security.integer("console", "absolute_timeout_hours", 1...720),
            maxFailuresPerAccount: try security.integer("console", "max_failed_sign_ins_per_account", 1...1_000),
            maxFailuresPerAddress: try security.integer("console", "max_failed_sign_ins_per_address", 1...100_000),
            failureWindowMinutes: try security.integer("console", "failed_sign_in_window_minutes", 1...1_440),
            secondFactorRequired: try security.roles("console", "second_factor_required"))
    }
}

extension PolicySet {
    /// The console's sessions and sign-in lockout.
    package var console: ConsolePolicy { self[ConsolePolicy.self] }
}
