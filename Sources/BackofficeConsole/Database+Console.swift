import BackofficePlatform
import Foundation
import PostgresNIO

extension Database {
    /// One console request, authenticated by its session (the SHA-256 of the cookie's secret) in
    /// the statement that makes the connection act for its operator, as a token does for the API
    /// (`authenticate_console`). A `change` runs in one transaction, committed only when `body`
    /// says so; a read runs in a read session (each read its own statement). `body` gets the
    /// principal (nil when the session is unknown, ended, at another `stage`, idle past the
    /// policy's idle timeout, older than its absolute lifetime (ten minutes for a sign-in step),
    /// or its operator disabled) with the session's id. The request keeps the session alive
    /// (`last_seen_at`) unless `touch` is false: a read the operator did not make (a live page's
    /// periodic read) leaves the idle clock alone.
    package func consoleRequest<T: Sendable>(
        session hash: [UInt8], policy: ConsolePolicy, change: Bool, stage: ConsoleStage = .signedIn, touch: Bool = true,
        _ body: (Principal?, RequestTransaction) async throws -> (T, commit: Bool)
    ) async throws -> T {
        let authenticate = AuthenticateConsole(
            hash: hash, idleSeconds: policy.idleTimeoutMinutes * 60,
            absoluteSeconds: stage == .signedIn ? policy.absoluteTimeoutHours * 3600 : ConsoleStage.stepLifetimeSeconds,
            local: change,
            stage: stage, touch: touch)
        func principal(_ connection: PostgresConnection) async throws -> Principal? {
            try await connection.rows(authenticate, logger: logger).first.flatMap(AuthenticateConsole.principal)
        }
        if change {
            return try await leasedTransaction { connection in
                try await body(
                    try await principal(connection), RequestTransaction(connection: connection, isReadOnly: false))
            }
        }
        return try await session(on: client, within: leaseTimeout, authenticate: principal) { try await body($0, $1).0 }
    }
}

/// `authenticate_console`: a console session's principal, acting for it in the transaction
/// (`local`) or the connection's session, planning as PostgreSQL chooses.
package struct AuthenticateConsole: PostgresPreparedStatement {
    package static let sql = """
        SELECT a.session_id, a.operator_id, a.tenant_id, a.role, a.time_zone
        FROM set_config('plan_cache_mode', 'auto', $4) p, set_config('enable_sort', 'on', $4) s,
            authenticate_console($1, $2, $3, $4, $5, $6) a,
            set_config('app.operator_id', coalesce(a.operator_id::text, ''), $4) o
        """
    package typealias Row = (UUID, UUID, UUID, String, String)
    package let hash: [UInt8]
    package let idleSeconds: Int
    package let absoluteSeconds: Int
    package let local: Bool
    package let stage: ConsoleStage
    package let touch: Bool

    package func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 6)
        b.append(ByteBuffer(bytes: hash))
        b.append(Int32(idleSeconds))
        b.append(Int32(absoluteSeconds))
        b.append(local)
        b.append(stage.rawValue)
        b.append(touch)
        return b
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }

    package static func principal(_ row: Row) -> Principal? {
        Role(rawValue: row.3).map {
            Principal(
                operatorID: row.1, role: $0, tenantID: row.2, tokenID: nil, sessionID: row.0,
                timeZone: OperatorTimeZone.zone(named: row.4))
        }
    }
}
