import BackofficePlatform
import Foundation
import PostgresNIO

/// Where a console session stands: a code is due (`secondFactor`), a second factor must be set up
/// first (`enrol`), or the operator is signed in. Only `signedIn` reaches the console's pages.
package enum ConsoleStage: String, Sendable {
    case secondFactor = "second_factor"
    case enrol
    case signedIn = "signed_in"

    /// The longest a session may stay in a sign-in step: ten minutes.
    package static let stepLifetimeSeconds = 600
}

/// The context operator's second factor: its sealed secret and last accepted step (nil when it
/// has none), its email, and how many recovery codes are left.
package struct SecondFactorState: Query {
    package static let action: Action = "sessions.sign_in"
    package struct State: Sendable {
        package let sealedSecret: [UInt8]?
        package let lastStep: Int64
        package let email: String
        package let recoveryCodesLeft: Int
    }

    package init() {}

    package func read(in unit: UnitOfWork) async throws -> State {
        guard let operatorID = unit.principal.operatorID else {
            throw DomainError.inconsistent("a second factor belongs to an operator")
        }
        let row = try await unit.first(
            """
            SELECT o.email, f.sealed_secret, coalesce(f.last_step, 0),
                   (SELECT count(*) FROM operator_recovery_codes c
                    WHERE c.tenant_id = o.tenant_id AND c.operator_id = o.id AND c.used_at IS NULL)
            FROM operators o LEFT JOIN operator_second_factors f ON f.tenant_id = o.tenant_id AND f.operator_id = o.id
            WHERE o.tenant_id = \(unit.principal.tenantID) AND o.id = \(operatorID)
            """
        ) { try $0.decode((String, ByteBuffer?, Int64, Int64).self) }
        guard let row else { throw DomainError.notFound("Operator \(operatorID.text)") }
        return State(
            sealedSecret: row.1.map { Array($0.readableBytesView) }, lastStep: row.2, email: row.0,
            recoveryCodesLeft: Int(row.3))
    }
}

/// What proves the second factor: a TOTP code's step, or a recovery code's hash.
package enum SecondFactorProof: Sendable {
    case code(step: Int64)
    case recoveryCode(hash: [UInt8])
}

/// A sign-in step's session becomes a signed-in one: the step's session ends
/// (`second_factor_passed`) and a new session, with a new secret, starts; `sessions.sign_in` is
/// recorded with the new session as actor. Shared by passing the second factor and enrolling.
package enum SessionPromotion {
    package static func promote(
        in unit: UnitOfWork, to newSession: (id: UUID, secretHash: [UInt8]), method: String, after: String? = nil
    ) async throws -> AuditRecord {
        guard let pending = unit.principal.sessionID, let operatorID = unit.principal.operatorID,
            let role = unit.principal.knownRole
        else {
            throw DomainError.inconsistent("a sign-in step runs in its own console session")
        }
        let ended = try await unit.first(
            """
            UPDATE console_sessions SET ended_at = \(unit.now), ended_reason = 'second_factor_passed'
            WHERE id = \(pending) AND stage <> 'signed_in' AND ended_at IS NULL RETURNING source_ip
            """
        ) { try $0.decode(String?.self) }
        guard let sourceIP = ended else {
            throw DomainError.conflict(code: "session_ended", detail: "This sign-in has ended: sign in again.")
        }
        try await unit.execute(
            """
            INSERT INTO console_sessions (id, secret_hash, tenant_id, operator_id, created_at, last_seen_at,
                source_ip, stage)
            VALUES (\(newSession.id), \(ByteBuffer(bytes: newSession.secretHash)), \(unit.principal.tenantID),
                \(operatorID),
                    \(unit.now), \(unit.now), \(sourceIP), 'signed_in')
            """)
        var event = AuditRecord(
            action: "sessions.sign_in", tenantID: unit.principal.tenantID, targetType: "operator",
            targetID: operatorID.text, reason: method,
            before: nil, after: after)
        event.actor = Principal(
            operatorID: operatorID, role: role, tenantID: unit.principal.tenantID, tokenID: nil,
            sessionID: newSession.id)
        return event
    }
}

/// Passes the second factor of a sign-in in its `second_factor` step: a code accepted once (its
/// step must be later than the last one accepted) or an unused recovery code (then used).
/// Refused (`wrong_code`, nothing changed) otherwise. Starts the signed-in session.
package struct PassSecondFactor: AuditedOperation {
    package static let action: Action = "sessions.sign_in"
    package let proof: SecondFactorProof
    package let newSession: (id: UUID, secretHash: [UInt8])

    package init(proof: SecondFactorProof, newSessionID: UUID, secretHash: [UInt8]) {
        self.proof = proof
        self.newSession = (newSessionID, secretHash)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Void> {
        guard let operatorID = unit.principal.operatorID else {
            throw DomainError.inconsistent("a second factor belongs to an operator")
        }
        let tenant = unit.principal.tenantID
        let accepted: Bool
        var after: String?
        switch proof {
        case .code(let step):
            accepted =
                try await unit.first(
                    """
                    UPDATE operator_second_factors SET last_step = \(step)
                    WHERE tenant_id = \(tenant) AND operator_id = \(operatorID) AND last_step < \(step) RETURNING 1
                    """
                ) { try $0.decode(Int32.self) } != nil
        case .recoveryCode(let hash):
            accepted =
                try await unit.first(
                    """
                    UPDATE operator_recovery_codes SET used_at = \(unit.now)
                    WHERE tenant_id = \(tenant) AND operator_id = \(operatorID) AND code_hash =
                        \(ByteBuffer(bytes: hash)) AND used_at IS NULL
                    RETURNING 1
                    """
                ) { try $0.decode(Int32.self) } != nil
            let left = try await unit.first(
                """
                SELECT count(*) FROM operator_recovery_codes WHERE tenant_id = \(tenant) AND operator_id = \
                \(operatorID) AND used_at IS NULL
                """
            ) { try $0.decode(Int64.self) }
            after = try AuditRecord.json(["recovery_codes_left": left ?? 0])
        }
        guard accepted else { throw Self.wrongCode }
        let signIn = try await SessionPromotion.promote(
            in: unit, to: newSession, method: { if case .code = proof { "totp" } else { "recovery_code" } }(),
            after: after)
        return Audited((), event: signIn)
    }

    package static let wrongCode = DomainError.invalid([
        .init(
            field: "code", code: "wrong_code",
            message: "is not the current code of your authenticator app, or a recovery code not yet used")
    ])
}

/// Gives an operator a second factor: its sealed TOTP secret (the code that confirmed it is the
/// last accepted) and the hashes of ten recovery codes; `operators.second_factor_enrolled`.
/// Refused (`already_enrolled`) when it has one, unless `replacing` (the demo setup). With
/// `promoting`, the operator is in the `enrol` step of a sign-in, which becomes signed in.
package struct EnrolSecondFactor: AuditedOperation {
    package static let action: Action = "operators.second_factor_enrolled"
    package let operatorID: UUID
    package let sealedSecret: [UInt8]
    package let confirmedStep: Int64
    package let recoveryCodeHashes: [[UInt8]]
    package let replacing: Bool
    package let promoting: (id: UUID, secretHash: [UInt8])?

    package init(
        operatorID: UUID, sealedSecret: [UInt8], confirmedStep: Int64, recoveryCodeHashes: [[UInt8]],
        replacing: Bool = false,
        promoting: (id: UUID, secretHash: [UInt8])? = nil
    ) {
        (
            self.operatorID, self.sealedSecret, self.confirmedStep, self.recoveryCodeHashes, self.replacing,
            self.promoting
        ) = (operatorID, sealedSecret, confirmedStep, recoveryCodeHashes, replacing, promoting)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Void> {
        guard
            let tenant = try await unit.first(
                "SELECT tenant_id FROM operators WHERE id = \(operatorID) AND kind = 'person' FOR UPDATE",
                { try $0.decode(UUID.self) })
        else { throw DomainError.notFound("Operator \(operatorID.text)") }
        if replacing {
            try await unit.execute(
                "DELETE FROM operator_second_factors WHERE tenant_id = \(tenant) AND operator_id = \(operatorID)")
        }
        let inserted = try await unit.first(
            """
            INSERT INTO operator_second_factors (tenant_id, operator_id, sealed_secret, enrolled_at, last_step)
            VALUES (\(tenant), \(operatorID), \(ByteBuffer(bytes: sealedSecret)), \(unit.now), \(confirmedStep))
            ON CONFLICT DO NOTHING RETURNING 1
            """
        ) { try $0.decode(Int32.self) }
        guard inserted != nil else {
            throw DomainError.conflict(code: "already_enrolled", detail: "This operator already has a second factor.")
        }
        for hash in recoveryCodeHashes {
            try await unit.execute(
                """
                INSERT INTO operator_recovery_codes (tenant_id, operator_id, code_hash) VALUES (\(tenant), \
                \(operatorID), \(ByteBuffer(bytes: hash)))
                """
            )
        }
        let enrolled = AuditRecord(
            action: Self.action, tenantID: tenant, targetType: "operator", targetID: operatorID.text,
            reason: replacing ? "replaced" : nil,
            before: nil, after: try AuditRecord.json(["recovery_codes": recoveryCodeHashes.count]))
        guard let promoting else { return Audited((), event: enrolled) }
        return Audited(
            (), event: enrolled,
            more: [try await SessionPromotion.promote(in: unit, to: promoting, method: "totp_enrolled")])
    }
}
