import BackofficePlatform
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
/// Guarantees (in memory, per process; the database's count, `ReserveSignInAttempt`, stays the
/// truth across processes and restarts):
/// - `admit` refuses, without a transaction, a bcrypt check or an audit event, an attempt whose
///   email from its address, or whose address, is known to be locked out, or for which this
///   process has already started the policy's number of attempts within the window: a flood
///   reaches the database at most the policy's number of times per window, then costs nothing.
///   An email is never locked out on its own: failures from elsewhere only slow it
///   (`slowing(after:policy:)`), so nobody who knows an operator's email can lock the owner out.
/// - `check` runs at most `checksPerAddress` password checks of one address at once (the others
///   of that address wait their turn), so one address cannot fill the checks other people wait
///   on; and at most `checksAtOnce` in all wait or run, one more refused with `SignInBusy` (503
///   with Retry-After): nobody queues for minutes.
/// - An attempt refused without a check is answered after `refusalDelay`, asleep (no thread, no
///   connection held): a client that floods waits for each answer, so the flood cannot spend the
///   cores that other requests need on refusals, and a refusal takes about as long as a check.
/// Bounded by forgetting what has left the window.
package final class SignInGate: Sendable {
    package let checksAtOnce: Int
    /// How long a refusal without a check waits before it is answered.
    package let refusalDelay: Duration
    /// The first wait of an email that failed the policy's number of times from anywhere; each
    /// further failure doubles it, up to sixteen times.
    package let slowStep: Duration
    /// Checks of one address that run at once.
    package static let checksPerAddress = 2
    /// The cost of the operators' password hashes, which an unknown email's check matches.
    package let passwordCost: UInt8
    /// What the refusals and the slowed checks wait on.
    package let timers: any Timers
    private let digestKey: SymmetricKey
    private let state = Mutex(State())
    private let checking = Atomic<Int>(0)
    private let ran = Atomic<Int>(0)

    private struct State {
        package var lockedUntil: [String: Date] = [:]
        /// Attempts started per key within the window, with the email digest each was for.
        package var started: [String: [(at: Date, email: String)]] = [:]
        /// Checks running per address, and those waiting their turn.
        package var running: [String: Int] = [:]
        package var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    /// An attempt `admit` let through, to `finish`.
    package struct Ticket: Sendable {
        package let keys: SignInKeys
        package let at: Date
    }

    /// How an admitted attempt ended.
    package enum Outcome: Sendable {
        /// Signed in: the email's attempts no longer count.
        case succeeded
        /// A checked failure: it counts until it leaves the window.
        case failed
        /// Never checked (the checks were full): it does not count.
        case uncounted
    }

    /// The password checks this gate has let run so far.
    package var checksRun: Int { ran.load(ordering: .relaxed) }

    /// `key`: the server's key for email digests (from `SecondFactorKey.derived`, so it survives
    /// restarts and is the same in every process).
    package init(
        key: SymmetricKey, checksAtOnce: Int = SignInGate.defaultChecksAtOnce, passwordCost: UInt8 = PasswordRules.cost,
        refusalDelay: Duration = .seconds(1), slowStep: Duration = .seconds(1), timers: any Timers = EventLoopTimers()
    ) {
        self.digestKey = key
        self.timers = timers
        self.checksAtOnce = max(1, checksAtOnce)
        self.passwordCost = passwordCost
        self.refusalDelay = refusalDelay
        self.slowStep = slowStep
    }

    /// The gate of a server with `secondFactorKey` (nil, as in a test server: a key of this
    /// process, so counts hold until it stops).
    package convenience init(
        secondFactorKey: SecondFactorKey?, checksAtOnce: Int = SignInGate.defaultChecksAtOnce,
        passwordCost: UInt8 = PasswordRules.cost,
        refusalDelay: Duration = .seconds(1), slowStep: Duration = .seconds(1)
    ) {
        self.init(
            key: secondFactorKey?.derived(for: "console-sign-in-emails") ?? SymmetricKey(size: .bits256),
            checksAtOnce: checksAtOnce,
            passwordCost: passwordCost, refusalDelay: refusalDelay, slowStep: slowStep)
    }

    /// Waits `refusalDelay` before a refusal without a check is answered.
    package func delayRefusal() async {
        try? await timers.sleep(for: refusalDelay)
    }

    /// How long an attempt waits before its check when its email failed `failures` times within
    /// the window from any address: nothing below the policy's limit per account, then
    /// `slowStep`, doubling with each further failure, at most sixteen times `slowStep`.
    package func slowing(after failures: Int, policy: ConsolePolicy) -> Duration {
        guard failures >= policy.maxFailuresPerAccount else { return .zero }
        return slowStep * (1 << min(failures - policy.maxFailuresPerAccount, 4))
    }

    /// Sixteen waiting checks per bcrypt thread: at the service's cost (about 0.25 s a check on
    /// one core) the last in line is answered within about 4 s.
    package static let defaultChecksAtOnce = 16 * PasswordRules.threads

    /// The keys an attempt from `sourceIP` for `email` counts under.
    package func keys(email: String, sourceIP: String?) -> SignInKeys {
        let normalised = EmailAddress.normalised(email)
        let digest = HMAC<SHA256>.authenticationCode(for: Data(normalised.utf8), using: digestKey)
        return SignInKeys(emailDigest: Array(digest), address: Self.address(sourceIP))
    }

    /// Admits an attempt of `keys` at `now` and counts it, or refuses it (nil): its email or
    /// address is locked out, or this process started the policy's attempts for either within the
    /// window. Checked and counted in one step, so concurrent attempts cannot all pass.
    package func admit(_ keys: SignInKeys, now: Date, policy: ConsolePolicy) -> Ticket? {
        let window = TimeInterval(policy.failureWindowMinutes * 60)
        let (email, address) = (Self.name(email: keys), Self.name(address: keys))
        return state.withLock { state in
            for name in [email, address] {
                if let until = state.lockedUntil[name], until > now { return nil }
                state.started[name]?.removeAll { now.timeIntervalSince($0.at) >= window }
            }
            guard state.started[email, default: []].count < policy.maxFailuresPerAccount,
                state.started[address, default: []].count < policy.maxFailuresPerAddress
            else { return nil }
            state.started[email, default: []].append((now, email))
            state.started[address, default: []].append((now, email))
            if state.started.count > 20_000 {
                state.started = state.started.filter { $0.value.contains { now.timeIntervalSince($0.at) < window } }
                state.lockedUntil = state.lockedUntil.filter { $0.value > now }
            }
            return Ticket(keys: keys, at: now)
        }
    }

    /// Ends an admitted attempt: a success clears its email's count and lockout here; an
    /// uncounted one no longer counts.
    package func finish(_ ticket: Ticket, _ outcome: Outcome) {
        let (email, address) = (Self.name(email: ticket.keys), Self.name(address: ticket.keys))
        state.withLock { state in
            switch outcome {
            case .failed: break
            case .succeeded:
                state.started[email] = nil
                state.started[address]?.removeAll { $0.email == email }
                state.lockedUntil[email] = nil
            case .uncounted:
                for name in [email, address] {
                    if let index = state.started[name]?.firstIndex(where: { $0.at == ticket.at && $0.email == email }) {
                        state.started[name]?.remove(at: index)
                    }
                }
            }
        }
    }

    /// Remembers the lockouts a reservation found or a failure reached.
    package func remember(_ lockout: SignInLockout, for keys: SignInKeys) {
        state.withLock { state in
            if let until = lockout.email { state.lockedUntil[Self.name(email: keys)] = until }
            if let until = lockout.address { state.lockedUntil[Self.name(address: keys)] = until }
        }
    }

    /// Runs `check` as one password check from `address` (a `SignInKeys.address`): after that
    /// address's earlier checks beyond `checksPerAddress`, or throws `SignInBusy` when
    /// `checksAtOnce` are already waiting or running.
    package func check<T: Sendable>(address limitKey: String, _ check: () async throws -> T) async throws -> T {
        let address = "address:" + limitKey
        await turn(address)
        defer { endTurn(address) }
        let before = checking.add(1, ordering: .relaxed).oldValue
        defer { checking.subtract(1, ordering: .relaxed) }
        guard before < checksAtOnce else { throw SignInBusy() }
        ran.add(1, ordering: .relaxed)
        return try await check()
    }

    private func turn(_ address: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.running[address, default: 0] < Self.checksPerAddress else {
                    state.waiting[address, default: []].append(continuation)
                    return false
                }
                state.running[address, default: 0] += 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    private func endTurn(_ address: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if var queue = state.waiting[address], !queue.isEmpty {
                let next = queue.removeFirst()
                state.waiting[address] = queue.isEmpty ? nil : queue
                return next  // the turn passes to it: `running` stays
            }
            let left = state.running[address, default: 1] - 1
            state.running[address] = left > 0 ? left : nil
            return nil
        }
        next?.resume()
    }

    /// The email from this address: what a lockout is keyed to (never the email alone).
    private static func name(email keys: SignInKeys) -> String { "email:" + hex(keys.emailDigest) + "@" + keys.address }
    private static func name(address keys: SignInKeys) -> String { "address:" + keys.address }

    /// The address key an attempt from `sourceIP` counts under (`ClientAddress.limitKey`).
    package static func address(_ sourceIP: String?) -> String { ClientAddress.limitKey(sourceIP ?? "unknown") }
}

/// Too many password checks are waiting: nothing was checked or counted; try again shortly.
package struct SignInBusy: Error, Sendable {
    package let retryAfterSeconds = 2
}

/// Until when an email from one address, and that address, are locked out (nil: not locked).
package struct SignInLockout: Sendable, Equatable {
    /// The email typed, from this address.
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
