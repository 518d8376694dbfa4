import Foundation
import Logging
import PostgresNIO

/// The service's PostgreSQL: a pool of connections as a role that owns no table, so row-level
/// security applies to every query.
public struct Database: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// Where units of work take "now" from.
    public let clock: any WallClock
    /// Where units of work take new ids from.
    public let ids: IDGenerator

    /// How long requests wait for PostgreSQL (lease timeout, request deadlines).
    public let limits: PoolLimits
    /// Longest wait for a pooled connection (`PoolLimits.leaseTimeout`).
    public var leaseTimeout: Duration { limits.leaseTimeout }
    /// Answers of hot reads shared briefly; every change committed here invalidates them.
    public let readCache = ReadCache()
    /// The streaming replica lag-tolerant reads go to, if any (`readSession`).
    public let replica: ReadReplica?

    public init(
        client: PostgresClient, logger: Logger, clock: any WallClock = SystemWallClock(), ids: IDGenerator = .random,
        limits: PoolLimits = PoolLimits(), replica: ReadReplica? = nil
    ) {
        self.client = client
        self.limits = limits
        self.logger = logger
        self.clock = clock
        self.ids = ids
        self.replica = replica
    }

    /// Runs `body` in one transaction acting for `principal`'s tenant and role
    /// (`set_config(…, true)`, local to the transaction). Commits when `body` returns, rolls back
    /// when it throws, and rethrows `body`'s own error unwrapped.
    public func transaction<T: Sendable>(
        for principal: Principal,
        isolation: String? = nil,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await transaction(actingFor: principal, isolation: isolation) { connection in (try await body(connection), commit: true) }
    }

    /// Leases a connection, begins, makes the transaction act for `principal`, runs `body`, and
    /// commits when it says so.
    /// With `fence` (a request's token) and a read replica, the commit fences the token's reads as
    /// a request transaction's does.
    private func transaction<T: Sendable>(
        actingFor principal: Principal, isolation: String? = nil, fence tokenHash: [UInt8]? = nil,
        _ body: (PostgresConnection) async throws -> (T, commit: Bool)
    ) async throws -> T {
        try await leasedTransaction(
            { connection in
                if let isolation {
                    _ = try await connection.send(PostgresQuery(unsafeSQL: "SET TRANSACTION ISOLATION LEVEL \(isolation)"), logger: logger)
                }
                _ = try await connection.rows(SetSession(tenant: principal.tenantID.uuidString, role: principal.role), logger: logger)
                return try await body(connection)
            }, afterCommit: fence(tokenHash))
    }

    /// Runs `body` in the context's request transaction when it has one (the edge's, already acting
    /// for the principal), otherwise in a new transaction acting for the principal.
    /// Outside one (a staged operation's steps), a change made with a request's token fences its
    /// replica reads like a request transaction's commit.
    public func transaction<T: Sendable>(for context: OperationContext, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        guard let request = context.transaction else {
            return try await transaction(actingFor: context.principal, fence: context.tokenHash) { connection in
                (try await body(connection), commit: true)
            }
        }
        return try await translatingErrors { try await body(request.connection) }
    }

    /// Runs `body` so that, inside a request transaction, its failure undoes only its own work
    /// (`SAVEPOINT` … `ROLLBACK TO SAVEPOINT`) and the transaction can go on; outside one, `body`
    /// runs its own transactions anyway.
    public func savepoint<T: Sendable>(_ context: OperationContext, _ body: () async throws -> T) async throws -> T {
        guard let connection = context.transaction?.connection else { return try await body() }
        return try await translatingErrors {
            _ = try await connection.rows(Savepoint(), logger: logger)
            do {
                return try await body()
            } catch {
                _ = try await connection.rows(RollbackToSavepoint(), logger: logger)
                throw error
            }
        }
    }

    /// One request's transaction: leases a connection, begins, and authenticates the token (by its
    /// SHA-256) in the same statement that makes the transaction act for its principal. `body` gets
    /// the principal (nil when the token is refused) and the transaction, and says whether to
    /// commit; anything else, or a throw, rolls back.
    ///
    /// With a read replica, the position of the commit in the primary's log goes to `committed`
    /// and is remembered for the token: its lag-tolerant reads stay on the primary until the
    /// replica has replayed it.
    public func requestTransaction<T: Sendable>(
        tokenHash: [UInt8], committed: CommittedPosition? = nil, _ body: (Principal?, RequestTransaction) async throws -> (T, commit: Bool)
    ) async throws -> T {
        try await leasedTransaction(
            { connection in
                let principal = try await connection.rows(AuthenticateRequest(hash: tokenHash), logger: logger).first.flatMap(Self.principal)
                return try await body(principal, RequestTransaction(connection: connection, isReadOnly: false))
            },
            afterCommit: fence(tokenHash, committed: committed))
    }

    /// With a read replica, what runs after a commit made with the token `tokenHash`: the commit's
    /// position is remembered for the token (its lag-tolerant reads stay on the primary until the
    /// replica has replayed it) and goes to `committed`.
    private func fence(_ tokenHash: [UInt8]?, committed: CommittedPosition? = nil) -> ((PostgresConnection) async throws -> Void)? {
        guard let replica, let tokenHash else { return nil }
        return { connection in
            guard let lsn = try await connection.rows(CurrentLogPosition(), logger: self.logger).first.flatMap({ LSN($0) }) else { return }
            replica.wrote(token: tokenHash, at: lsn)
            committed?.record(lsn)
        }
    }

    /// One public request's transaction (an `x-public` operation, no token): acts for
    /// `Principal.anonymous`, which the policy lets perform only the public actions. `body` says
    /// whether to commit; anything else, or a throw, rolls back.
    public func publicTransaction<T: Sendable>(_ body: (RequestTransaction) async throws -> (T, commit: Bool)) async throws -> T {
        try await transaction(actingFor: .anonymous) { connection in try await body(RequestTransaction(connection: connection, isReadOnly: false)) }
    }

    /// One read-only request's session (GET): leases a connection and authenticates the token in
    /// one statement that makes the connection's session act for its principal; each read of
    /// `body` then runs as its own statement (no BEGIN or COMMIT: two round trips for a list page),
    /// row-level security applying as in a transaction. A change cannot run in it (the runner
    /// refuses). The session's settings stay with the connection until its next authentication;
    /// every transaction sets its own principal first, so they never reach other work.
    ///
    /// `plans` is how PostgreSQL plans the session's statements (`plan_cache_mode`, set by the same
    /// statement and, like the principal, reset by every later authentication and transaction).
    ///
    /// A `lagTolerant` read goes to the read replica when `ReadReplica.route` allows (not behind the
    /// token's own last change, nor `readAfter`); if the replica fails it for want of a connection,
    /// the primary answers it.
    public func readSession<T: Sendable>(
        tokenHash: [UInt8], plans: PlanMode = .auto, lagTolerant: Bool = false, readAfter: LSN? = nil,
        _ body: (Principal?, RequestTransaction) async throws -> T
    ) async throws -> T {
        if lagTolerant, let replica {
            switch replica.route(token: tokenHash, readAfter: readAfter) {
            case .replica:
                do {
                    let result = try await session(
                        on: replica.client, within: replica.leaseTimeout, lateLeaseEndsRequest: false, tokenHash: tokenHash, plans: plans, body)
                    ServiceMetrics.replicaReads.increment()
                    return result
                } catch DomainError.unavailable {
                    replica.failed()
                    ServiceMetrics.replicaFallback("failed")
                }
            case .primary(let reason):
                ServiceMetrics.replicaFallback(reason)
            }
        }
        return try await session(on: client, within: leaseTimeout, tokenHash: tokenHash, plans: plans, body)
    }

    private func session<T: Sendable>(
        on client: PostgresClient, within timeout: Duration, lateLeaseEndsRequest: Bool = true, tokenHash: [UInt8], plans: PlanMode,
        _ body: (Principal?, RequestTransaction) async throws -> T
    ) async throws -> T {
        try await translatingErrors {
            try await client.withConnection(within: timeout, lateLeaseEndsRequest: lateLeaseEndsRequest) { connection in
                let principal = try await connection.rows(AuthenticateSession(hash: tokenHash, plans: plans), logger: logger).first.flatMap(
                    Self.principal)
                return try await body(principal, RequestTransaction(connection: connection, isReadOnly: true))
            }
        }
    }

    private static func principal(_ row: AuthenticateRequest.Row) -> Principal? {
        Role(rawValue: row.3).map { Principal(operatorID: row.1, role: $0, tenantID: row.2, tokenID: row.0) }
    }

    /// Leases a connection and runs `body` between `BEGIN` and `COMMIT` (or `ROLLBACK` when it
    /// says not to commit, or throws); database errors come back as problems.
    /// `afterCommit` runs on the connection once the commit succeeded (its failure no longer undoes anything).
    private func leasedTransaction<T: Sendable>(
        _ body: (PostgresConnection) async throws -> (T, commit: Bool), afterCommit: ((PostgresConnection) async throws -> Void)? = nil
    ) async throws -> T {
        try await translatingErrors {
            try await client.withConnection(within: leaseTimeout) { connection in
                _ = try await connection.rows(Begin(), logger: logger)
                do {
                    let (result, commit) = try await body(connection)
                    if commit {
                        // Not once the request has been answered 503 by its deadline (the catch rolls back).
                        try await RequestDeadline.committing { _ = try await connection.rows(Commit(), logger: logger) }
                        readCache.changed()
                        try? await afterCommit?(connection)
                    } else {
                        _ = try await connection.rows(Rollback(), logger: logger)
                    }
                    return result
                } catch {
                    _ = try? await connection.rows(Rollback(), logger: logger)
                    throw error
                }
            }
        }
    }

    /// Runs `body`, turning a `PSQLError` into what `translate` makes of it.
    private func translatingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            throw Database.translate(error, logger: logger)
        }
    }

    /// Maps database failures that clients can act on to domain errors; everything else becomes 503
    /// (connection) or 500, never echoing the database's message. Logged with the request id and
    /// only the SQLSTATE and the names of the constraint, table and column: never the server's
    /// message or detail, which can quote the failing row.
    static func translate(_ error: PSQLError, logger: Logger) -> any Error {
        var logger = logger
        if let requestID = RequestScope.current?.requestID { logger[metadataKey: "request_id"] = .string(requestID) }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            var metadata: Logger.Metadata = ["sqlstate": .string(state)]
            for (key, field) in [("constraint", PSQLError.ServerInfo.Field.constraintName), ("table", .tableName), ("column", .columnName)] {
                if let value = error.serverInfo?[field] { metadata[key] = .string(value) }
            }
            logger.error("database error", metadata: metadata)
            switch state {
            case PostgresError.Code.uniqueViolation.raw:
                return DomainError.conflict(code: "already_exists", detail: "A resource with these values already exists.")
            case PostgresError.Code.insufficientPrivilege.raw:
                return DomainError.refused
            case PostgresError.Code.deadlockDetected.raw, PostgresError.Code.serializationFailure.raw:
                return DomainError.contention
            case PostgresError.Code.queryCanceled.raw:  // statement_timeout
                ServiceMetrics.statementTimeouts.increment()
                return DomainError.timedOut
            case PostgresError.Code.checkViolation.raw, PostgresError.Code.notNullViolation.raw:
                return DomainError.invalid([FieldIssue(field: "body", code: "constraint", message: "violates a constraint")])
            case let state where state.hasPrefix("22"):  // data exception: a value out of range or not representable
                return DomainError.invalid([FieldIssue(field: "body", code: "invalid_value", message: "a value cannot be stored")])
            case let state where state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53"):
                // connection exception; shutdown or restart of the server; out of connections or memory
                return DomainError.unavailable
            default:
                return DomainError.inconsistent("database error \(state)")
            }
        case .connectionError, .poolClosed, .serverClosedConnection, .clientClosedConnection, .connectionClosed:
            logger.error("database unavailable", metadata: ["error_code": "\(error.code)"])
            return DomainError.unavailable
        default:
            logger.error("database error", metadata: ["error_code": "\(error.code)"])
            return DomainError.inconsistent("database error \(error.code)")
        }
    }
}

/// Where the primary's log is after a commit: a replica that has replayed this far holds it.
struct CurrentLogPosition: PostgresPreparedStatement {
    static let sql = "SELECT pg_current_wal_insert_lsn()::text"
    typealias Row = String
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
}

/// A statement that takes no parameters and returns no rows (transaction control).
protocol ControlStatement: PostgresPreparedStatement where Row == () {}

extension ControlStatement {
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

struct Begin: ControlStatement { static let sql = "BEGIN" }
struct Commit: ControlStatement { static let sql = "COMMIT" }
struct Rollback: ControlStatement { static let sql = "ROLLBACK" }
struct Savepoint: ControlStatement { static let sql = "SAVEPOINT work" }
struct RollbackToSavepoint: ControlStatement { static let sql = "ROLLBACK TO SAVEPOINT work" }

/// How PostgreSQL plans a session's statements with parameters (`plan_cache_mode`).
public enum PlanMode: String, Sendable {
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
    var sorts: String { self == .generic ? "off" : "on" }
}

/// Authenticates a token and makes the transaction act for its principal (`authenticate_request`),
/// planning as PostgreSQL chooses (`PlanMode.auto`, local to the transaction).
struct AuthenticateRequest: PostgresPreparedStatement {
    static let sql =
        """
        SELECT a.token_id, a.operator_id, a.tenant_id, a.role
        FROM set_config('plan_cache_mode', 'auto', true) p, set_config('enable_sort', 'on', true) s, authenticate_request($1) a
        """
    typealias Row = (UUID, UUID, UUID, String)
    let hash: [UInt8]
    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 1)
        b.append(ByteBuffer(bytes: hash))
        return b
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// `authenticate_session`: as `AuthenticateRequest`, for the session of a read (settings kept by
/// the session), planning as `plans` says.
struct AuthenticateSession: PostgresPreparedStatement {
    static let sql = """
        SELECT a.token_id, a.operator_id, a.tenant_id, a.role
        FROM set_config('plan_cache_mode', $2, false) p, set_config('enable_sort', $3, false) s, authenticate_session($1) a
        """
    typealias Row = AuthenticateRequest.Row
    let hash: [UInt8]
    let plans: PlanMode
    func makeBindings() throws -> PostgresBindings {
        var bindings = try AuthenticateRequest(hash: hash).makeBindings()
        bindings.append(plans.rawValue)
        bindings.append(plans.sorts)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The transaction a request runs in, from the edge: every read and change of the request runs
/// on it, and it commits only when the answer is a success. A change and its audit event, and an
/// Idempotency-Key record, therefore commit together or not at all.
public struct RequestTransaction: Sendable {
    public let connection: PostgresConnection
    /// A read session (GET) rather than a transaction: reads only, each its own statement.
    public let isReadOnly: Bool
}

/// Sets the tenant and role the transaction acts for (row-level security reads them), planning as
/// PostgreSQL chooses (`PlanMode.auto`).
struct SetSession: PostgresPreparedStatement {
    static let sql = """
        SELECT set_config('app.tenant_id', $1, true), set_config('app.role', $2, true), set_config('plan_cache_mode', 'auto', true),
            set_config('enable_sort', 'on', true)
        """
    typealias Row = (String, String, String, String)
    let tenant: String
    let role: String
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(tenant)
        bindings.append(role)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

extension PostgresConnection {
    /// Runs a prepared statement and collects its rows.
    /// - Throws: `DomainError.unavailable` at once when the connection is closed: PostgresNIO
    ///   never answers a statement written to a closed connection (its promise is dropped), so a
    ///   rollback after the server went away would wait forever.
    func rows<S: PostgresPreparedStatement>(_ statement: S, logger: Logger) async throws -> [S.Row] {
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
    func send(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw DomainError.unavailable }
        return try await self.query(query, logger: logger)
    }
}

/// The first row of `query` on `connection` decoded by `decode`, or nil (for work outside a unit
/// of work: bootstrap and tools on the owner's connection).
func firstRow<T>(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger, _ decode: (PostgresRow) throws -> T) async throws -> T? {
    for try await row in try await connection.send(query, logger: logger) { return try decode(row) }
    return nil
}
