import BackofficePlatform
import Crypto
import Foundation
import PostgresNIO

/// A console session's secret: 32 random bytes in base64url, in an HttpOnly cookie and nowhere
/// else. The database keeps its SHA-256; the CSRF token of its forms is an HMAC of it.
package struct SessionSecret: Sendable, Equatable {
    package let value: String

    /// A new secret from the system's cryptographic random source.
    package static func generate() -> SessionSecret {
        SessionSecret(value: Base64URL.random(bytes: 32))
    }

    package init(value: String) { self.value = value }

    /// The stored form: SHA-256 of the secret's bytes.
    package var hash: [UInt8] { Array(SHA256.hash(data: Data(value.utf8))) }

    /// Whether the text has the shape of a secret (cheap check before touching the database).
    package var isWellFormed: Bool {
        value.utf8.count == 43 && value.utf8.allSatisfy { Base64URL.alphabet.contains($0) }
    }

    /// The CSRF token of this session's forms: HMAC-SHA256 of a fixed label under the secret, so
    /// it is bound to the session, stored nowhere, and cannot be made without the cookie.
    package var csrfToken: String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Self.csrfLabel, using: csrfKey)))
    }

    /// Whether `token` is this session's CSRF token (checked by swift-crypto in constant time).
    package func accepts(csrfToken token: String) -> Bool {
        guard let code = Base64URL.decode(token) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Self.csrfLabel, using: csrfKey)
    }

    private static let csrfLabel = Data("console-csrf".utf8)
    private var csrfKey: SymmetricKey { SymmetricKey(data: Data(value.utf8)) }
}

/// Who an email signs in as, with its password hash. Read by the system before anyone is signed
/// in; `email` is compared in its normalised form (`EmailAddress`), exactly.
package struct SignInCandidate: Query {
    package static let action: Action = "sessions.sign_in"
    package struct Found: Sendable {
        package let principal: Principal?
        package let active: Bool
        package let passwordHash: String?
        /// Whether the operator has a second factor (a code is due after the password).
        package let hasSecondFactor: Bool
    }
    package let email: String

    package func read(in unit: UnitOfWork) async throws -> Found {
        let operatorRow = try await unit.first(
            """
            SELECT tenant_id, operator_id, role, status, password_hash, second_factor
            FROM console_sign_in_candidate(\(EmailAddress.normalised(email)))
            """
        ) {
            try $0.decode((UUID, UUID, String, String, String, Bool).self)
        }
        let principal = try operatorRow.map { row in
            Principal(operatorID: row.1, role: try Role(known: row.2), tenantID: row.0, tokenID: nil)
        }
        return Found(
            principal: principal, active: operatorRow?.3 == "active", passwordHash: operatorRow?.4,
            hasSecondFactor: operatorRow?.5 == true)
    }
}

/// Starts a console session for `principal` (an operator's, with its new session id) at `stage`:
/// stores the secret's hash; signed in, it clears the email's counted attempts, else (a
/// second-factor step follows) only the password's own attempt; and records `sessions.sign_in`
/// (signed in) or `sessions.password_accepted` with the operator as actor. Run by the system (the
/// attempts are the platform's).
package struct StartConsoleSession: AuditedOperation {
    package static let action: Action = "sessions.sign_in"
    package let principal: Principal
    package let secretHash: [UInt8]
    package let keys: SignInKeys
    package let attempt: UUID
    package let stage: ConsoleStage

    package func perform(in unit: UnitOfWork) async throws -> Audited<UUID> {
        guard let sessionID = principal.sessionID, let operatorID = principal.operatorID else {
            throw DomainError.inconsistent("a console session starts for an operator's principal with its session id")
        }
        try await unit.execute(
            """
            INSERT INTO console_sessions (id, secret_hash, tenant_id, operator_id, created_at, last_seen_at,
                source_ip, stage)
            VALUES (\(sessionID), \(ByteBuffer(bytes: secretHash)), \(principal.tenantID), \(operatorID), \(unit.now),
                \(unit.now),
                    \(unit.context.sourceIP), \(stage.rawValue))
            """)
        _ = try await (stage == .signedIn ? ReleaseSignInAttempts.clearing(keys) : .releasing(attempt)).perform(
            in: unit)
        var event = AuditRecord(
            action: stage == .signedIn ? Self.action : "sessions.password_accepted", tenantID: principal.tenantID,
            targetType: "operator",
            targetID: operatorID.text, reason: stage == .signedIn ? "password" : stage.rawValue, before: nil, after: nil
        )
        event.actor = principal
        return Audited(sessionID, event: event)
    }
}

/// Records the outcome of a reserved attempt that failed (`attempt` marked failed, under the
/// keys' advisory locks): `sessions.sign_in_failed` (on the operator when the email names one,
/// else on no one: the typed email is not kept), and `sessions.locked_out` when this failure is
/// the one that reaches a limit (the email from this address, or the address) — one per lockout:
/// attempts refused while locked out are neither checked nor audited. When the operator's email
/// reaches the policy's failures from any address (its sign-ins slowed from then on), a notice is
/// mailed to the operator in the same transaction, once per window. Answers the lockouts the
/// failures now make. Without `attempt` (a code sent while locked out) only the event is
/// written. `ending` names a sign-in step's session that ends with it; `endingIfLocked` one that
/// ends if the failures now lock the email or address.
package struct RecordFailedSignIn: AuditedOperation {
    package static let action: Action = "sessions.sign_in_failed"
    package let keys: SignInKeys
    package let attempt: UUID?
    package let target: Principal?
    package let reason: String
    package var ending: UUID? = nil
    package var endingIfLocked: UUID? = nil

    package func perform(in unit: UnitOfWork) async throws -> Audited<SignInLockout> {
        func end(_ session: UUID) async throws {
            try await unit.execute(
                """
                UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'locked_out' WHERE id = \
                \(session) AND ended_at IS NULL
                """
            )
        }
        if let ending { try await end(ending) }
        let tenant = target?.tenantID ?? platformTenantID
        let targetID = target?.operatorID?.text ?? "unknown"
        let failed = AuditRecord(
            action: Self.action, tenantID: tenant, targetType: "operator", targetID: targetID, reason: reason,
            before: nil, after: nil)
        guard let attempt else { return Audited(SignInLockout(), event: failed) }
        let policy = unit.policies.console
        try await keys.lock(in: unit)
        try await unit.execute("UPDATE console_sign_in_failures SET failed = true WHERE id = \(attempt)")
        let attempts = try await SignInAttempts.read(keys, policy: policy, in: unit)
        let (failures, lockout) = (attempts.failed, attempts.failed.lockout)
        if let endingIfLocked, lockout.email != nil || lockout.address != nil { try await end(endingIfLocked) }
        let reached = (
            email: failures.email.times.count == policy.maxFailuresPerAccount,
            address: failures.address.times.count == policy.maxFailuresPerAddress
        )
        var more: [AuditRecord] = []
        if reached.email || reached.address {
            more.append(
                AuditRecord(
                    action: "sessions.locked_out", tenantID: tenant, targetType: "operator", targetID: targetID,
                    reason: reached.email ? "too_many_failed_sign_ins" : "too_many_failed_sign_ins_from_address",
                    before: nil, after: nil))
        }
        guard attempts.failedAnywhere == policy.maxFailuresPerAccount, let operatorID = target?.operatorID,
            let email = try await unit.first(
                "SELECT email FROM operators WHERE id = \(operatorID)", { try $0.decode(String.self) })
        else { return Audited(lockout, event: failed, more: more) }
        let notice = try await Outbox.queue(
            QueuedMail(
                kind: .lockoutNotice, tenantID: tenant, recipient: email, operatorID: operatorID,
                fields: [
                    "failures": String(policy.maxFailuresPerAccount),
                    "minutes": String(policy.failureWindowMinutes),
                    "address": unit.context.sourceIP ?? "an unknown address",
                ]), in: unit)
        return Audited(lockout, event: failed, more: more + [notice])
    }
}

/// Ends the context's console session (`sessions.sign_out`) or, `everywhere`, every open session
/// of its operator (`sessions.sign_out_everywhere`).
package struct EndConsoleSessions: AuditedOperation {
    package static let action: Action = "sessions.sign_out"
    package let everywhere: Bool

    package init(everywhere: Bool) { self.everywhere = everywhere }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        guard let sessionID = unit.principal.sessionID, let operatorID = unit.principal.operatorID else {
            throw DomainError.inconsistent("signing out needs a console session")
        }
        let ended = try await unit.all(
            everywhere
                ? """
                UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'signed_out_everywhere'
                WHERE tenant_id = \(unit.principal.tenantID) AND operator_id = \(operatorID) AND ended_at IS NULL
                    RETURNING id
                """
                : """
                UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'signed_out'
                WHERE id = \(sessionID) AND ended_at IS NULL RETURNING id
                """
        ) { try $0.decode(UUID.self) }
        return Audited(
            ended.count,
            event: AuditRecord(
                action: everywhere ? "sessions.sign_out_everywhere" : Self.action, tenantID: unit.principal.tenantID,
                targetType: "operator",
                targetID: operatorID.text, reason: nil, before: nil,
                after: try AuditRecord.json(["sessions_ended": ended.count])))
    }
}

extension QueuedMail.Kind {
    /// Too many failed sign-ins to the operator's account (its sign-ins are slowed).
    package static let lockoutNotice: Self = "lockout_notice"
}
