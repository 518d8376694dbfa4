import Crypto
import Foundation
import Synchronization

/// What console sign-in attempts are counted by: a keyed digest of the email typed (normalised
/// by `EmailAddress`, so its Unicode and case variants count as one) and the address as
/// per-address limits count it (`ClientAddress.limitKey`: an IPv6 address's /64). The email itself
/// is kept nowhere: it may be a password typed in the wrong field.
package struct SignInKeys: Sendable, Hashable {
    /// HMAC-SHA256 of the normalised email under the server's key.
    package let emailDigest: [UInt8]
    package let address: String
}

/// The console's door: what a sign-in passes before any password work.
///
/// Guarantees:
/// - A key (email or address) known to be locked out is refused here, in memory, without a
///   transaction, a bcrypt check or an audit event; the database's count (`ReserveSignInAttempt`)
///   stays the truth, and this process learns every lockout it meets there.
/// - At most `checksAtOnce` password checks wait or run at once; one more is refused with
///   `SignInBusy` (503 with Retry-After), so a flood queues nobody for minutes.
/// In memory, per process; bounded by forgetting locks that have ended.
package final class SignInGate: Sendable {
    package let checksAtOnce: Int
    /// The cost of the operators' password hashes, which an unknown email's check matches.
    package let passwordCost: UInt8
    private let digestKey: SymmetricKey
    private let lockedUntil = Mutex<[String: Date]>([:])
    private let checking = Atomic<Int>(0)
    private let ran = Atomic<Int>(0)

    /// The password checks this gate has let run so far.
    package var checksRun: Int { ran.load(ordering: .relaxed) }

    /// `key`: the server's key for email digests (from `SecondFactorKey.derived`, so it survives
    /// restarts and is the same in every process).
    package init(key: SymmetricKey, checksAtOnce: Int = SignInGate.defaultChecksAtOnce, passwordCost: UInt8 = PasswordRules.cost) {
        self.digestKey = key
        self.checksAtOnce = max(1, checksAtOnce)
        self.passwordCost = passwordCost
    }

    /// The gate of a server with `secondFactorKey` (nil, as in a test server: a key of this
    /// process, so counts hold until it stops).
    package convenience init(
        secondFactorKey: SecondFactorKey?, checksAtOnce: Int = SignInGate.defaultChecksAtOnce, passwordCost: UInt8 = PasswordRules.cost
    ) {
        self.init(
            key: secondFactorKey?.derived(for: "console-sign-in-emails") ?? SymmetricKey(size: .bits256), checksAtOnce: checksAtOnce,
            passwordCost: passwordCost)
    }

    /// Sixteen waiting checks per bcrypt thread: at the service's cost (about 0.25 s a check on
    /// one core) the last in line is answered within about 4 s.
    package static let defaultChecksAtOnce = 16 * PasswordRules.threads

    /// The keys an attempt from `sourceIP` for `email` counts under.
    package func keys(email: String, sourceIP: String?) -> SignInKeys {
        let normalised = EmailAddress.normalised(email)
        let digest = HMAC<SHA256>.authenticationCode(for: Data(normalised.utf8), using: digestKey)
        return SignInKeys(emailDigest: Array(digest), address: ClientAddress.limitKey(sourceIP ?? "unknown"))
    }

    /// Whether this process knows the email or the address to be locked out at `now`.
    package func isLocked(_ keys: SignInKeys, now: Date) -> Bool {
        lockedUntil.withLock { locks in
            [Self.name(email: keys), Self.name(address: keys)].contains { locks[$0].map { $0 > now } ?? false }
        }
    }

    /// Remembers the lockouts a reservation found or a failure reached.
    package func remember(_ lockout: SignInLockout, for keys: SignInKeys, now: Date) {
        lockedUntil.withLock { locks in
            if let until = lockout.email { locks[Self.name(email: keys)] = until }
            if let until = lockout.address { locks[Self.name(address: keys)] = until }
            if locks.count > 10_000 { locks = locks.filter { $0.value > now } }
        }
    }

    /// Forgets the email's lockout (a sign-in succeeded: its failures are cleared).
    package func forgetEmail(of keys: SignInKeys) {
        _ = lockedUntil.withLock { $0.removeValue(forKey: Self.name(email: keys)) }
    }

    /// Runs `check` as one password check, or throws `SignInBusy` when `checksAtOnce` are
    /// already waiting or running.
    package func check<T: Sendable>(_ check: () async throws -> T) async throws -> T {
        let before = checking.add(1, ordering: .relaxed).oldValue
        defer { checking.subtract(1, ordering: .relaxed) }
        guard before < checksAtOnce else { throw SignInBusy() }
        ran.add(1, ordering: .relaxed)
        return try await check()
    }

    private static func name(email keys: SignInKeys) -> String { "email:" + hex(keys.emailDigest) }
    private static func name(address keys: SignInKeys) -> String { "address:" + keys.address }
}

/// Too many password checks are waiting: nothing was checked or counted; try again shortly.
package struct SignInBusy: Error, Sendable {
    package let retryAfterSeconds = 2
}

/// Until when an email and an address are locked out (nil: not locked).
package struct SignInLockout: Sendable, Equatable {
    package var email: Date?
    package var address: Date?
}

/// The newest attempts counted under one key within the window (at most `limit`, newest first),
/// and what they mean for the lockout: locked once `limit` of them are within the window, until
/// the oldest of those leaves it.
package struct SignInWindow: Sendable, Equatable {
    package let times: [Date]
    package let limit: Int
    package let window: TimeInterval

    package init(times: [Date], limit: Int, window: TimeInterval) {
        self.times = Array(times.sorted(by: >).prefix(limit))
        self.limit = limit
        self.window = window
    }

    /// Until when the key is locked out now; nil when another attempt may be checked.
    package var lockedUntil: Date? {
        times.count >= limit ? times[limit - 1].addingTimeInterval(window) : nil
    }
}
