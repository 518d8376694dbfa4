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
    package var isWellFormed: Bool { value.utf8.count == 43 && value.utf8.allSatisfy { Base64URL.alphabet.contains($0) } }

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

/// Who an email signs in as, with its password hash, and the recent failed sign-ins that decide
/// the lockout. Read by the system before anyone is signed in.
package struct SignInCandidate: Query {
    package static let action: Action = "sessions.sign_in"
    package struct Found: Sendable {
        package let principal: Principal?
        package let active: Bool
        package let passwordHash: String?
        package let failures: SignInFailures.Found
        /// Whether the operator has a second factor (a code is due after the password).
        package let hasSecondFactor: Bool
    }
    let email: String
    let sourceIP: String
    let windowMinutes: Int

    package func read(in unit: UnitOfWork) async throws -> Found {
        let failures = try await SignInFailures(email: email, sourceIP: sourceIP, windowMinutes: windowMinutes).read(in: unit)
        let operatorRow = try await unit.first(
            "SELECT tenant_id, operator_id, role, status, password_hash, second_factor FROM console_sign_in_candidate(\(email))"
        ) {
            try $0.decode((UUID, UUID, String, String, String, Bool).self)
        }
        let principal = try operatorRow.map { row in
            Principal(operatorID: row.1, role: try Role(known: row.2), tenantID: row.0, tokenID: nil)
        }
        return Found(
            principal: principal, active: operatorRow?.3 == "active", passwordHash: operatorRow?.4,
            failures: failures, hasSecondFactor: operatorRow?.5 == true)
    }
}

/// The failed sign-ins within the window that decide the lockout: of an email, and from an
/// address. Read by the system.
package struct SignInFailures: Query {
    package static let action: Action = "sessions.sign_in"
    package struct Found: Sendable {
        package let forEmail: Int
        package let fromAddress: Int

        /// Whether the email or the address is locked out now.
        package func locked(under policy: ConsolePolicy) -> Bool {
            forEmail >= policy.maxFailuresPerAccount || fromAddress >= policy.maxFailuresPerAddress
        }

        /// Whether one more failure reaches a lockout (the failure that does is `sessions.locked_out`).
        package func nextReachesLimit(under policy: ConsolePolicy) -> Bool {
            !locked(under: policy) && (forEmail + 1 == policy.maxFailuresPerAccount || fromAddress + 1 == policy.maxFailuresPerAddress)
        }
    }
    let email: String
    let sourceIP: String
    let windowMinutes: Int

    package func read(in unit: UnitOfWork) async throws -> Found {
        let since = unit.now.addingTimeInterval(-Double(windowMinutes * 60))
        let counts = try await unit.first(
            """
            SELECT (SELECT count(*) FROM console_sign_in_failures WHERE email = \(email.lowercased()) AND at > \(since)),
                   (SELECT count(*) FROM console_sign_in_failures WHERE source_ip = \(sourceIP) AND at > \(since))
            """
        ) { try $0.decode((Int64, Int64).self) }
        return Found(forEmail: Int(counts?.0 ?? 0), fromAddress: Int(counts?.1 ?? 0))
    }
}

/// Starts a console session for `principal` (an operator's, with its new session id) at `stage`:
/// stores the secret's hash, clears the email's failed sign-ins, and records `sessions.sign_in`
/// (signed in) or `sessions.password_accepted` (a second-factor step follows) with the operator as
/// actor. Run by the system (the failures are the platform's).
package struct StartConsoleSession: AuditedOperation {
    package static let action: Action = "sessions.sign_in"
    let principal: Principal
    let secretHash: [UInt8]
    let email: String
    let stage: ConsoleStage

    package func perform(in unit: UnitOfWork) async throws -> Audited<UUID> {
        guard let sessionID = principal.sessionID, let operatorID = principal.operatorID else {
            throw DomainError.inconsistent("a console session starts for an operator's principal with its session id")
        }
        try await unit.execute(
            """
            INSERT INTO console_sessions (id, secret_hash, tenant_id, operator_id, created_at, last_seen_at, source_ip, stage)
            VALUES (\(sessionID), \(ByteBuffer(bytes: secretHash)), \(principal.tenantID), \(operatorID), \(unit.now), \(unit.now),
                    \(unit.context.sourceIP), \(stage.rawValue))
            """)
        if stage == .signedIn {
            try await unit.execute("DELETE FROM console_sign_in_failures WHERE email = \(email.lowercased())")
        }
        var event = AuditRecord(
            action: stage == .signedIn ? Self.action : "sessions.password_accepted", tenantID: principal.tenantID, targetType: "operator",
            targetID: operatorID.text, reason: stage == .signedIn ? "password" : stage.rawValue, before: nil, after: nil)
        event.actor = principal
        return Audited(sessionID, event: event)
    }
}

/// Records a refused sign-in: a failure for the email typed and the address, and
/// `sessions.sign_in_failed` (on the operator when the email names one, else on no one: the
/// typed email is not kept, as it may be a password typed in the wrong field); and
/// `sessions.locked_out` when this failure reaches a limit. `ending` names a sign-in step's
/// session that ends with it (a wrong code once the limit is reached).
package struct RecordFailedSignIn: AuditedOperation {
    package static let action: Action = "sessions.sign_in_failed"
    let email: String
    let sourceIP: String
    let target: Principal?
    let reason: String
    let lockedOut: Bool
    var ending: UUID? = nil

    package func perform(in unit: UnitOfWork) async throws -> Audited<Void> {
        try await unit.execute(
            "INSERT INTO console_sign_in_failures (email, source_ip, at) VALUES (\(email.lowercased()), \(sourceIP), \(unit.now))")
        if let ending {
            try await unit.execute(
                "UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'locked_out' WHERE id = \(ending) AND ended_at IS NULL")
        }
        let tenant = target?.tenantID ?? platformTenantID
        let targetID = target?.operatorID?.text ?? "unknown"
        let failed = AuditRecord(
            action: Self.action, tenantID: tenant, targetType: "operator", targetID: targetID, reason: reason, before: nil, after: nil)
        guard lockedOut else { return Audited((), event: failed) }
        let locked = AuditRecord(
            action: "sessions.locked_out", tenantID: tenant, targetType: "operator", targetID: targetID, reason: "too_many_failed_sign_ins",
            before: nil, after: nil)
        return Audited((), event: failed, more: [locked])
    }
}

/// Ends the context's console session (`sessions.sign_out`) or, `everywhere`, every open session
/// of its operator (`sessions.sign_out_everywhere`).
package struct EndConsoleSessions: AuditedOperation {
    package static let action: Action = "sessions.sign_out"
    let everywhere: Bool

    package init(everywhere: Bool) { self.everywhere = everywhere }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        guard let sessionID = unit.principal.sessionID, let operatorID = unit.principal.operatorID else {
            throw DomainError.inconsistent("signing out needs a console session")
        }
        let ended = try await unit.all(
            everywhere
                ? """
                UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'signed_out_everywhere'
                WHERE tenant_id = \(unit.principal.tenantID) AND operator_id = \(operatorID) AND ended_at IS NULL RETURNING id
                """
                : """
                UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'signed_out'
                WHERE id = \(sessionID) AND ended_at IS NULL RETURNING id
                """
        ) { try $0.decode(UUID.self) }
        return Audited(
            ended.count,
            event: AuditRecord(
                action: everywhere ? "sessions.sign_out_everywhere" : Self.action, tenantID: unit.principal.tenantID, targetType: "operator",
                targetID: operatorID.text, reason: nil, before: nil, after: try AuditRecord.json(["sessions_ended": ended.count])))
    }
}
