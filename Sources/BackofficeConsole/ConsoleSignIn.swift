import BackofficePlatform
import Foundation
import HummingbirdBcrypt
import NIOCore
import NIOPosix
import Synchronization

/// What a console password must be: at least 12 characters, at most 72 bytes in UTF-8 (all that
/// bcrypt reads: a longer one is refused, never silently cut), and not one of the 10,000 most
/// common passwords (`common-passwords.txt`, compared ignoring case).
package enum PasswordRules {
    package static let minimumLength = 12
    /// bcrypt's limit: it reads no further than this many bytes.
    package static let maximumBytes = 72

    /// The shipped list, lower-cased.
    package static let common: Set<String> = {
        guard let url = Bundle.module.url(forResource: "common-passwords", withExtension: "txt"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [] }
        return Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.lowercased() })
    }()

    /// Throws `invalid` (field `password`) naming the rule a password breaks.
    package static func check(_ password: String) throws {
        guard !common.isEmpty else {
            throw DomainError.inconsistent("the list of common passwords is missing from the service's resources")
        }
        let count = password.count
        guard count >= minimumLength else {
            throw DomainError.invalid([
                .init(
                    field: "password", code: "too_short",
                    message: "must be at least \(minimumLength) characters (this one has \(count))")
            ])
        }
        guard password.utf8.count <= maximumBytes else {
            throw DomainError.invalid([
                .init(
                    field: "password", code: "too_long",
                    message:
                        """
                        must be at most \(maximumBytes) bytes (about \(maximumBytes) letters, fewer with accents \
                        or symbols; this one has \(password.utf8.count))
                        """
                )
            ])
        }
        guard !common.contains(password.lowercased()) else {
            throw DomainError.invalid([
                .init(
                    field: "password", code: "common_password",
                    message: "is one of the 10,000 most common passwords: choose another")
            ])
        }
    }

    /// Where bcrypt runs: a thread pool of its own with half the cores (at least one), off the
    /// event loops, so a burst of sign-ins queues here and never takes every core from the
    /// requests being served (measured in `ops/bench/run`, the sign-ins row).
    package static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }()

    /// The threads of `pool`.
    package static let threads = max(1, System.coreCount / 2)

    /// The bcrypt cost of every password the service sets (2^12 rounds).
    package static let cost: UInt8 = 12

    /// The bcrypt hash of a password that passed `check`, computed on `pool`.
    package static func hash(_ password: String, cost: UInt8 = cost) async throws -> String {
        try await pool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`, checked on `pool`. Without a hash (an unknown email), or
    /// for a password longer than any that can be set (bcrypt would compare only its first 72
    /// bytes), a hash of a text no one knows is checked instead, at `unknownCost` (the cost the
    /// real hashes have), so the answer takes as long either way.
    package static func verify(_ password: String, hash: String?, unknownCost: UInt8 = cost) async throws -> Bool {
        let settable = password.utf8.count <= maximumBytes
        let matches = try await pool.runIfActive {
            Bcrypt.verify(
                password, hash: settable ? hash ?? unknownHash(cost: unknownCost) : unknownHash(cost: unknownCost))
        }
        return hash != nil && settable && matches
    }

    /// A bcrypt hash at `cost` of a random text no one knows, made once per cost and process.
    private static func unknownHash(cost: UInt8) -> String {
        unknownHashes.withLock { hashes in
            if let hash = hashes[cost] { return hash }
            let hash = Bcrypt.hash(UUID().uuidString + UUID().uuidString, cost: cost)
            hashes[cost] = hash
            return hash
        }
    }
    private static let unknownHashes = Mutex<[UInt8: String]>([:])
}

/// Sets an operator's console password (a person operator of the transaction's tenant), as its
/// bcrypt hash; ends the operator's open console sessions when it replaces one.
package struct SetOperatorPassword: AuditedOperation {
    package static let action: Action = "operators.set_password"
    package let operatorID: UUID
    package let passwordHash: String

    /// `passwordHash` is `PasswordRules.hash` of a password that passed `PasswordRules.check`.
    package init(operatorID: UUID, passwordHash: String) {
        self.operatorID = operatorID
        self.passwordHash = passwordHash
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Void> {
        guard
            let target = try await unit.first(
                "SELECT tenant_id, email, kind FROM operators WHERE id = \(operatorID) FOR UPDATE",
                {
                    try $0.decode((UUID, String, String).self)
                })
        else { throw DomainError.notFound("Operator \(operatorID.text)") }
        guard target.2 == "person" else {
            throw DomainError.invalid([
                .init(field: "operator_id", code: "not_a_person", message: "a service operator has no password")
            ])
        }
        let replaced = try await unit.first(
            """
            INSERT INTO operator_passwords (tenant_id, operator_id, email, password_hash, set_at)
            VALUES (\(target.0), \(operatorID), \(target.1), \(passwordHash), \(unit.now))
            ON CONFLICT (tenant_id, operator_id) DO UPDATE SET password_hash = excluded.password_hash, set_at =
                excluded.set_at
            RETURNING (xmax <> 0)
            """
        ) { try $0.decode(Bool.self) }
        if replaced == true {
            try await unit.execute(
                """
                UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'password_reset'
                WHERE tenant_id = \(target.0) AND operator_id = \(operatorID) AND ended_at IS NULL
                """)
        }
        return Audited(
            (),
            event: AuditRecord(
                action: Self.action, tenantID: target.0, targetType: "operator", targetID: operatorID.text,
                reason: replaced == true ? "replaced" : "first", before: nil, after: nil))
    }
}

/// Signs an operator in to the console with email and password. A refusal never says whether the
/// email exists: unknown email, wrong password, disabled operator and lockout all answer the same.
///
/// Guarantees: an email locked out from an address, or an address locked out, is refused before
/// any transaction or bcrypt work (`SignInGate`, backed by the database's count); every other
/// attempt is reserved before it is checked (`ReserveSignInAttempt`), so at most the policy's
/// attempts per email from one address, and per address, are checked within a window, whatever
/// the concurrency; failures of an email from elsewhere slow its owner, never lock them out; at
/// most `SignInGate.checksAtOnce` checks wait at once (`SignInBusy` beyond, the attempt released
/// uncounted); every checked failure is audited, and the one that reaches a limit once more as
/// `sessions.locked_out`; a burst of right passwords for one email is refused past the limit while
/// it lasts, and locks no one out (only failures do). A right password starts a session at the
/// `secondFactor` step when the operator has a second factor, at `enrol` when its role needs one it
/// lacks, else signed in.
package struct ConsoleSignIn: Sendable {
    package let database: Database
    package let policies: PolicySet
    package let gate: SignInGate

    package init(database: Database, policies: PolicySet, gate: SignInGate) {
        self.database = database
        self.policies = policies
        self.gate = gate
    }

    package enum Outcome: Sendable {
        /// A new session at `stage`: signed in, or a second-factor step due.
        case started(SessionSecret, Principal, ConsoleStage)
        case refused
    }

    package func signIn(email: String, password: String, scope: RequestScope) async throws -> Outcome {
        let policy = policies.console
        let keys = gate.keys(email: email, sourceIP: scope.sourceIP)
        let system = OperationContext(scope, acting: .anonymous, policies: policies)
        guard let (ticket, attempt) = try await gate.reserve(keys, database: database, context: system, policy: policy)
        else {
            await gate.delayRefusal()
            return .refused
        }
        let checked: (SignInCandidate.Found, Bool)
        do {
            checked = try await gate.check(address: keys.address) {
                let found = try await database.readAsSystem(SignInCandidate(email: email), context: system)
                return (
                    found,
                    try await PasswordRules.verify(password, hash: found.passwordHash, unknownCost: gate.passwordCost)
                )
            }
        } catch let busy as SignInBusy {
            gate.finish(ticket, .uncounted)
            try await database.runAsSystem(ReleaseSignInAttempts.releasing(attempt), context: system)
            throw busy
        }
        let (found, matches) = checked
        guard let principal = found.principal, matches, found.active,
            let operatorID = principal.operatorID, let role = principal.knownRole
        else {
            gate.finish(ticket, .failed)
            let reason = found.principal == nil ? "unknown_email" : !matches ? "wrong_password" : "operator_disabled"
            let lockout = try await database.runAsSystem(
                RecordFailedSignIn(keys: keys, attempt: attempt, target: found.principal, reason: reason),
                context: system)
            gate.remember(lockout, for: keys)
            return .refused
        }
        let secret = SessionSecret.generate()
        let signedIn = Principal(
            operatorID: operatorID, role: role, tenantID: principal.tenantID, tokenID: nil,
            sessionID: database.ids.next())
        let stage: ConsoleStage =
            found.hasSecondFactor
            ? .secondFactor : policy.secondFactorRequired.contains(role.rawValue) ? .enrol : .signedIn
        _ = try await database.runAsSystem(
            StartConsoleSession(
                principal: signedIn, secretHash: secret.hash, keys: keys, attempt: attempt, stage: stage),
            context: system)
        gate.finish(ticket, stage == .signedIn ? .succeeded : .uncounted)
        return .started(secret, signedIn, stage)
    }
}

extension SignInGate {
    /// Admits one attempt of `keys` in memory, then reserves it in the database
    /// (`ReserveSignInAttempt`): its ticket and reserved attempt, or nil when it is refused
    /// (locked out, or the policy's attempts are already counted; a lockout met is remembered).
    /// An email that failed the policy's number of times from anywhere waits `slowing` first.
    package func reserve(_ keys: SignInKeys, database: Database, context: OperationContext, policy: ConsolePolicy)
        async throws
        -> (ticket: Ticket, attempt: UUID)?
    {
        guard let ticket = admit(keys, now: database.clock.now(), policy: policy) else { return nil }
        let reservation = try await database.runAsSystem(
            ReserveSignInAttempt(keys: keys, policy: policy), context: context)
        guard case .reserved(let attempt, let failures) = reservation else {
            finish(ticket, .uncounted)
            if case .locked(let settled) = reservation { remember(settled, for: keys) }
            return nil
        }
        // Failures from anywhere slow the email's checks; they never refuse them.
        let wait = slowing(after: failures, policy: policy)
        try? await timers.sleep(for: wait)
        return (ticket, attempt)
    }
}
