import Foundation
import Logging
import PostgresNIO

/// Where the primary's log is after a commit: a replica that has replayed this far holds it.
package struct CurrentLogPosition: PostgresPreparedStatement {
    package static let sql = "SELECT pg_current_wal_insert_lsn()::text"
    package typealias Row = String
    package func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
}

/// A statement that takes no parameters and returns no rows (transaction control).
package protocol ControlStatement: PostgresPreparedStatement where Row == () {}

extension ControlStatement {
    package func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    package func decodeRow(_ row: PostgresRow) throws {}
}

package struct Begin: ControlStatement { package static let sql = "BEGIN" }
package struct Commit: ControlStatement { package static let sql = "COMMIT" }
package struct Rollback: ControlStatement { package static let sql = "ROLLBACK" }
package struct Savepoint: ControlStatement { package static let sql = "SAVEPOINT work" }
package struct RollbackToSavepoint: ControlStatement { package static let sql = "ROLLBACK TO SAVEPOINT work" }

/// How PostgreSQL plans a session's statements with parameters (`plan_cache_mode`).
package enum PlanMode: String, Sendable {
    /// Its default: a custom plan for each execution until a cached generic one looks as cheap.
    /// Right for statements whose best plan depends on the values (`$1 IS NULL OR …` filters).
    case auto
    /// The cached generic plan of each prepared statement, never planning again: for sessions
    /// that run only prepared pages whose every shape has one right plan (`OrderPage`,
    /// `CustomerPage`). PostgreSQL's own choice keeps planning them on every request (it
    /// judges the generic plan of a keyset page dearer than a custom one), which cost as much
    /// database time as running the page.
    case generic = "force_generic_plan"

    /// `enable_sort` for the session: a generic session takes its order from an index, never from
    /// a sort. Row-level security's filter (`app.tenant_id` compared with a constant) has no
    /// statistics, so PostgreSQL guesses it keeps 0.5% of the rows; a page over 20,000 accounts
    /// then looked cheaper as a whole-table scan and a sort than as a walk of `customers_email`,
    /// and the generic plan, cached per connection, kept it (172 pages/s where pgbench, which
    /// bypasses row-level security, ran 6,710). Forbidding the sort leaves the index walk.
    package var sorts: String { self == .generic ? "off" : "on" }
}

/// Authenticates a token and makes the transaction act for its principal (`authenticate_request`),
/// planning as PostgreSQL chooses (`PlanMode.auto`, local to the transaction).
package struct AuthenticateRequest: PostgresPreparedStatement {
    package static let sql =
        """
        SELECT a.token_id, a.operator_id, a.tenant_id, a.role, a.scopes, a.allowed_addresses
        FROM set_config('plan_cache_mode', 'auto', true) p, set_config('enable_sort', 'on', true) s,
            authenticate_request($1) a, set_config('app.operator_id', coalesce(a.operator_id::text, ''), true) o
        """
    package typealias Row = (UUID, UUID, UUID, String, [String]?, [String]?)
    package let hash: [UInt8]
    package func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 1)
        b.append(ByteBuffer(bytes: hash))
        return b
    }
    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// `authenticate_session`: as `AuthenticateRequest`, for the session of a read (settings kept by
/// the session), planning as `plans` says.
package struct AuthenticateSession: PostgresPreparedStatement {
    package static let sql = """
        SELECT a.token_id, a.operator_id, a.tenant_id, a.role, a.scopes, a.allowed_addresses
        FROM set_config('plan_cache_mode', $2, false) p, set_config('enable_sort', $3, false) s,
            authenticate_session($1) a,
            set_config('app.operator_id', coalesce(a.operator_id::text, ''), false) o
        """
    package typealias Row = AuthenticateRequest.Row
    package let hash: [UInt8]
    package let plans: PlanMode
    package func makeBindings() throws -> PostgresBindings {
        var bindings = try AuthenticateRequest(hash: hash).makeBindings()
        bindings.append(plans.rawValue)
        bindings.append(plans.sorts)
        return bindings
    }
    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The transaction a request runs in, from the edge: every read and change of the request runs
/// on it, and it commits only when the answer is a success. A change and its audit event, and an
/// Idempotency-Key record, therefore commit together or not at all.
package struct RequestTransaction: Sendable {
    package let connection: PostgresConnection
    /// A read session (GET) rather than a transaction: reads only, each its own statement.
    package let isReadOnly: Bool
    package init(connection: PostgresConnection, isReadOnly: Bool) {
        (self.connection, self.isReadOnly) = (connection, isReadOnly)
    }
}

/// Sets the tenant, role and operator the transaction acts for (row-level security reads them;
/// the operator is empty for the system), planning as PostgreSQL chooses (`PlanMode.auto`).
package struct SetSession: PostgresPreparedStatement {
    package static let sql = """
        SELECT set_config('app.tenant_id', $1, true), set_config('app.role', $2, true),
            set_config('app.operator_id', $3, true), set_config('plan_cache_mode', 'auto', true),
            set_config('enable_sort', 'on', true)
        """
    package typealias Row = (String, String, String, String, String)
    package let tenant: String
    package let role: String
    package let operatorID: String
    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(tenant)
        bindings.append(role)
        bindings.append(operatorID)
        return bindings
    }
    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

extension PostgresConnection {
    /// Runs a prepared statement and collects its rows.
    /// - Throws: `DomainError.unavailable` at once when the connection is closed: PostgresNIO
    ///   never answers a statement written to a closed connection (its promise is dropped), so a
    ///   rollback after the server went away would wait forever.
    package func rows<S: PostgresPreparedStatement>(_ statement: S, logger: Logger) async throws -> [S.Row] {
        guard !isClosed else { throw DomainError.unavailable }
        var rows: [S.Row] = []
        for try await row in try await self.execute(statement, logger: logger) {
            rows.append(row)
        }
        return rows
    }

    /// Sends `query` (parameters interpolated) and gives its rows: what the service uses instead
    /// of `query(_:logger:)`.
    /// - Throws: `DomainError.unavailable` at once when the connection is closed (see `rows`).
    package func send(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw DomainError.unavailable }
        return try await self.query(query, logger: logger)
    }
}

/// The first row of `query` on `connection` decoded by `decode`, or nil (for work outside a unit
/// of work: bootstrap and tools on the owner's connection).
package func firstRow<T>(
    _ query: PostgresQuery, on connection: PostgresConnection, logger: Logger, _ decode: (PostgresRow) throws -> T
) async throws
    -> T?
{
    for try await row in try await connection.send(query, logger: logger) { return try decode(row) }
    return nil
}
