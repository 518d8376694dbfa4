import Foundation
import Logging
import PostgresNIO

/// The service's PostgreSQL: a pool of connections as a role that owns no table, so row-level
/// security applies to every query.
package struct Database: Sendable {
    package let client: PostgresClient
    package let logger: Logger
    /// Where units of work take "now" from.
    package let clock: any WallClock
    /// Where units of work take new ids from.
    package let ids: IDGenerator

    /// How long requests wait for PostgreSQL (lease timeout, request deadlines).
    package let limits: PoolLimits
    /// Longest wait for a pooled connection (`PoolLimits.leaseTimeout`).
    package var leaseTimeout: Duration { limits.leaseTimeout }
    /// Answers of hot reads shared briefly; every change committed here invalidates them.
    package let readCache = ReadCache()
    /// The streaming replica lag-tolerant reads go to, if any (`readSession`).
    package let replica: ReadReplica?

    package init(
        client: PostgresClient, logger: Logger, clock: any WallClock = SystemWallClock(), ids: IDGenerator = .random,
        limits: PoolLimits = PoolLimits(), replica: ReadReplica? = nil
    ) {
        (self.client, self.limits, self.logger, self.clock, self.ids, self.replica) = (
            client, limits, logger, clock, ids, replica
        )
    }

    /// Runs `body` in one transaction acting for `principal`'s tenant and role
    /// (`set_config(…, true)`, local to the transaction). Commits when `body` returns, rolls back
    /// when it throws, and rethrows `body`'s own error unwrapped.
    package func transaction<T: Sendable>(
        for principal: Principal,
        isolation: String? = nil,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await transaction(actingFor: principal, isolation: isolation) { connection in
            (try await body(connection), commit: true)
        }
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
                    _ = try await connection.send(
                        PostgresQuery(unsafeSQL: "SET TRANSACTION ISOLATION LEVEL \(isolation)"), logger: logger)
                }
                _ = try await connection.rows(
                    SetSession(
                        tenant: principal.tenantID.text, role: principal.role,
                        operatorID: principal.operatorID?.text ?? ""), logger: logger)
                return try await body(connection)
            }, afterCommit: fence(tokenHash))
    }

    /// Runs `body` in the context's request transaction when it has one (the edge's, already acting
    /// for the principal), otherwise in a new transaction acting for the principal.
    /// Outside one (a staged operation's steps), a change made with a request's token fences its
    /// replica reads like a request transaction's commit.
    package func transaction<T: Sendable>(for context: OperationContext, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
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
    package func savepoint<T: Sendable>(_ context: OperationContext, _ body: () async throws -> T) async throws -> T {
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
    package func requestTransaction<T: Sendable>(
        tokenHash: [UInt8], committed: CommittedPosition? = nil,
        _ body: (Principal?, RequestTransaction) async throws -> (T, commit: Bool)
    ) async throws -> T {
        try await leasedTransaction(
            { connection in
                let principal = try await connection.rows(AuthenticateRequest(hash: tokenHash), logger: logger).first
                    .flatMap(Self.principal)
                return try await body(principal, RequestTransaction(connection: connection, isReadOnly: false))
            },
            afterCommit: fence(tokenHash, committed: committed))
    }

    /// Runs `body` in a request transaction whose first statement authenticates `context`'s token
    /// again, refusing (`unauthenticated`) unless it is still the same principal; commits when
    /// `body` returns. For a change whose request held no transaction while it waited (an upload).
    package func reauthenticatedTransaction<T: Sendable>(
        for context: OperationContext, _ body: (OperationContext) async throws -> T
    ) async throws -> T {
        guard let tokenHash = context.tokenHash else { throw DomainError.unauthenticated }
        return try await requestTransaction(tokenHash: tokenHash) { principal, transaction in
            guard principal == context.principal else { throw DomainError.unauthenticated }
            return (try await body(context.with(transaction)), commit: true)
        }
    }

    /// With a read replica, what runs after a commit made with the token `tokenHash`: the commit's
    /// position is remembered for the token (its lag-tolerant reads stay on the primary until the
    /// replica has replayed it) and goes to `committed`. Within the lease timeout, and at once when
    /// the connection closes under it (`RequestDeadline.watching`: a primary killed at the commit
    /// leaves a statement PostgresNIO never answers); a position not read keeps the token's reads on
    /// the primary until the replica's next check places it (`ReadReplica.wroteAtUnknownPosition`).
    private func fence(_ tokenHash: [UInt8]?, committed: CommittedPosition? = nil) -> (
        (PostgresConnection) async throws -> Void
    )? {
        guard let replica, let tokenHash else { return nil }
        return { connection in
            let lsn = try? await RequestDeadline.watching(
                connection, within: self.limits.leaseTimeout, timers: self.limits.timers
            ) { connection in
                try await connection.rows(CurrentLogPosition(), logger: self.logger).first.flatMap { LSN($0) }
            }
            guard let lsn else { return replica.wroteAtUnknownPosition(token: tokenHash) }
            replica.wrote(token: tokenHash, at: lsn)
            committed?.record(lsn)
        }
    }

    /// One public request's transaction (an `x-public` operation, no token): acts for
    /// `Principal.anonymous`, which the policy lets perform only the public actions. `body` says
    /// whether to commit; anything else, or a throw, rolls back.
    package func publicTransaction<T: Sendable>(_ body: (RequestTransaction) async throws -> (T, commit: Bool))
        async throws -> T
    {
        try await transaction(actingFor: .anonymous) { connection in
            try await body(RequestTransaction(connection: connection, isReadOnly: false))
        }
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
    package func readSession<T: Sendable>(
        tokenHash: [UInt8], plans: PlanMode = .auto, lagTolerant: Bool = false, readAfter: LSN? = nil,
        _ body: (Principal?, RequestTransaction) async throws -> T
    ) async throws -> T {
        if lagTolerant, let replica {
            switch replica.route(token: tokenHash, readAfter: readAfter) {
            case .replica:
                do {
                    let result = try await session(
                        on: replica.client, within: replica.leaseTimeout, lateLeaseEndsRequest: false,
                        tokenHash: tokenHash, plans: plans, body)
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
        on client: PostgresClient, within timeout: Duration, lateLeaseEndsRequest: Bool = true, tokenHash: [UInt8],
        plans: PlanMode,
        _ body: (Principal?, RequestTransaction) async throws -> T
    ) async throws -> T {
        try await session(
            on: client, within: timeout, lateLeaseEndsRequest: lateLeaseEndsRequest,
            authenticate: { connection in
                try await connection.rows(AuthenticateSession(hash: tokenHash, plans: plans), logger: logger).first
                    .flatMap(Self.principal)
            }, body)
    }

    /// Leases a connection from `client`, authenticates on it with `authenticate` (a statement
    /// that also makes the connection's session act for the principal it finds), and runs `body`
    /// as a read session: for a token (`readSession`) or a console session (`consoleRequest`).
    package func session<T: Sendable>(
        on client: PostgresClient, within timeout: Duration, lateLeaseEndsRequest: Bool = true,
        authenticate: (PostgresConnection) async throws -> Principal?,
        _ body: (Principal?, RequestTransaction) async throws -> T
    ) async throws -> T {
        try await translatingErrors {
            try await client.withConnection(
                within: timeout, timers: limits.timers, lateLeaseEndsRequest: lateLeaseEndsRequest
            ) { connection in
                let principal = try await authenticate(connection)
                return try await body(principal, RequestTransaction(connection: connection, isReadOnly: true))
            }
        }
    }

    /// The principal of an authenticated token, with the scopes and networks it is narrowed to.
    private static func principal(_ row: AuthenticateRequest.Row) -> Principal? {
        guard let role = Role(rawValue: row.3) else { return nil }
        return Principal(
            operatorID: row.1, role: role, tenantID: row.2, tokenID: row.0, scopes: row.4.map(Set.init),
            allowedAddresses: row.5.map { $0.compactMap { try? CIDR($0) } })
    }

    /// Leases a connection and runs `body` between `BEGIN` and `COMMIT` (or `ROLLBACK` when it
    /// says not to commit, or throws); database errors come back as problems.
    /// `afterCommit` runs on the connection once the commit succeeded, still under the commit's
    /// claim (`RequestDeadline.committing`: the deadline does not answer 503 for a committed
    /// change); its failure no longer undoes anything, and it bounds itself, as the fence does.
    package func leasedTransaction<T: Sendable>(
        _ body: (PostgresConnection) async throws -> (T, commit: Bool),
        afterCommit: ((PostgresConnection) async throws -> Void)? = nil
    ) async throws -> T {
        try await translatingErrors {
            try await client.withConnection(within: leaseTimeout, timers: limits.timers) { connection in
                _ = try await connection.rows(Begin(), logger: logger)
                do {
                    let (result, commit) = try await body(connection)
                    if commit {
                        // Not once the request has been answered 503 by its deadline (the catch rolls back).
                        try await RequestDeadline.committing {
                            _ = try await connection.rows(Commit(), logger: logger)
                        } then: {
                            readCache.changed()
                            try? await afterCommit?(connection)
                        }
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
}
