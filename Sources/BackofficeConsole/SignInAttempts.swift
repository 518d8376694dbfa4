import BackofficePlatform
import Crypto
import Foundation
import PostgresNIO

/// Reserves one sign-in attempt (a password or a second-factor code) before it is checked: under
/// a transaction-scoped advisory lock per key (`SignInKeys.lock`: email digest, then address, in
/// every transaction that counts attempts), it reads the attempts counted within the window and
/// either answers `locked` or records the attempt, so at most the policy's number of attempts
/// per email from one address, and per address, are ever checked within a window, however many
/// arrive at once. The email alone is never locked: the failures it had from any address within
/// the window come back with the reservation, and slow its check (`SignInGate.slowing`).
///
/// The recorded row is pending until its check fails (`RecordFailedSignIn` marks it failed, in the
/// transaction of its audit event) or succeeds (`StartConsoleSession`, `ReleaseSignInAttempts`
/// delete it). Pending and failed rows count toward the limit on checks; only failed ones make a
/// lockout (`locked`'s `settled`), so a burst of right passwords is refused while it lasts but
/// locks no one out. A crash between leaves a pending row counted until it ages out: the safe
/// side. Run by the system.
package struct ReserveSignInAttempt: AuditedOperation {
    package static let action: Action = "sessions.sign_in"
    package enum Outcome: Sendable, Equatable {
        /// Recorded; `failures`: the email's failures from any address within the window.
        case reserved(attempt: UUID, failures: Int)
        /// Not recorded: too many attempts are counted. `settled`: the failed ones alone lock the
        /// email or the address until these instants (empty while pending attempts fill the count).
        case locked(settled: SignInLockout)
    }
    package let keys: SignInKeys
    package let policy: ConsolePolicy

    package init(keys: SignInKeys, policy: ConsolePolicy) { (self.keys, self.policy) = (keys, policy) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Outcome> {
        try await keys.lock(in: unit)
        let counted = try await SignInAttempts.read(keys, policy: policy, in: unit)
        if counted.all.email.lockedUntil != nil || counted.all.address.lockedUntil != nil {
            return .unchanged(.locked(settled: counted.failed.lockout))
        }
        let attempt = unit.newID()
        try await unit.execute(
            """
            INSERT INTO console_sign_in_failures (id, email_digest, address, at)
            VALUES (\(attempt), \(ByteBuffer(bytes: keys.emailDigest)), \(keys.address), \(unit.now))
            """)
        return .unchanged(.reserved(attempt: attempt, failures: counted.failedAnywhere))
    }
}

extension SignInKeys {
    /// Takes the transaction-scoped advisory locks of these keys: the email's, then the address's.
    package func lock(in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            SELECT pg_advisory_xact_lock(hashtextextended('console-sign-in:email:' ||
                encode(\(ByteBuffer(bytes: emailDigest)), 'hex'), 0)),
                   pg_advisory_xact_lock(hashtextextended('console-sign-in:address:' || \(address), 0))
            """)
    }
}

/// The attempts counted within the window under an email from one address and under the
/// address: all of them (pending and failed), and the failed ones; and how many times the email
/// failed from any address.
package struct SignInAttempts {
    package struct Pair {
        /// The email from this address.
        package let email: SignInWindow
        package let address: SignInWindow
        package var lockout: SignInLockout { SignInLockout(email: email.lockedUntil, address: address.lockedUntil) }
    }
    package let all: Pair
    package let failed: Pair
    package let failedAnywhere: Int

    package static func read(_ keys: SignInKeys, policy: ConsolePolicy, in unit: UnitOfWork) async throws
        -> SignInAttempts
    {
        let window = TimeInterval(policy.failureWindowMinutes * 60)
        let since = unit.now.addingTimeInterval(-window)
        let digest = ByteBuffer(bytes: keys.emailDigest)
        let rows = try await unit.all(
            """
            SELECT at, failed, email_digest = \(digest), address = \(keys.address) FROM console_sign_in_failures
            WHERE (email_digest = \(digest) OR address = \(keys.address)) AND at > \(since)
            """
        ) { try $0.decode((Date, Bool, Bool, Bool).self) }
        func pair(_ include: (Bool) -> Bool) -> Pair {
            Pair(
                email: SignInWindow(
                    times: rows.filter { $0.2 && $0.3 && include($0.1) }.map(\.0), limit: policy.maxFailuresPerAccount,
                    window: window),
                address: SignInWindow(
                    times: rows.filter { $0.3 && include($0.1) }.map(\.0), limit: policy.maxFailuresPerAddress,
                    window: window))
        }
        return SignInAttempts(
            all: pair { _ in true }, failed: pair { $0 }, failedAnywhere: rows.filter { $0.1 && $0.2 }.count)
    }
}

/// Deletes an email's counted attempts from the address it succeeded from (its failures elsewhere
/// still slow it until they age out) once its sign-in has succeeded (the second-factor step's
/// success, whose own transaction acts for the operator's tenant and cannot see them), or the one
/// `attempt` that could not be checked (the password checks were full). Run by the system; the
/// sign-in's own event records the success.
package struct ReleaseSignInAttempts: AuditedOperation {
    package static let action: Action = "sessions.sign_in"
    package let emailDigest: [UInt8]?
    package let address: String?
    package let attempt: UUID?

    package static func clearing(_ keys: SignInKeys) -> Self {
        Self(emailDigest: keys.emailDigest, address: keys.address, attempt: nil)
    }
    package static func releasing(_ attempt: UUID) -> Self { Self(emailDigest: nil, address: nil, attempt: attempt) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Void> {
        if let emailDigest, let address {
            try await unit.execute(
                """
                DELETE FROM console_sign_in_failures WHERE email_digest = \(ByteBuffer(bytes: emailDigest))
                    AND address = \(address)
                """)
        }
        if let attempt { try await unit.execute("DELETE FROM console_sign_in_failures WHERE id = \(attempt)") }
        return .unchanged(())
    }
}
