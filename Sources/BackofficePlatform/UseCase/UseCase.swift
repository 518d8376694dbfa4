import Foundation
import Logging
import PostgresNIO

/// One thing a principal can do, read or change, named by the policy action that permits it.
/// The runner (`Database.read`, `Database.run`, and the idempotent `Idempotency.run`) checks the
/// policy before anything is read: nothing else checks permissions.
package protocol UseCase: Sendable {
    associatedtype Output: Sendable
    /// The permission of `policies/access.yaml` this use case needs.
    static var action: Action { get }
}

/// A use case that only reads (`ListCustomers`, `GetTenant`, …): no audit event.
package protocol Query: UseCase {
    associatedtype Output  // restated so conformers' `read` infers it
    func read(in unit: UnitOfWork) async throws -> Output
}

/// A query whose answer readers may share for a short while (`Database.read(_:context:maxAge:)`):
/// a hot read whose clients accept an answer a moment old (it says when it was read). Answers are
/// shared within a tenant and role, so a read whose rows row-level security narrows by operator
/// (`app.operator_id`) is never one.
package protocol CacheableQuery: Query {
    /// What tells this query's answers apart: every parameter of the read.
    var cacheKey: String { get }
}

/// What the change runners run: a change with its audit events and the permission this call needs.
///
/// `perform` makes the change inside a transaction that already acts for the principal's tenant,
/// and returns the result with the audit events describing it; the runner checks `permission`
/// before anything is read, appends those events in the same transaction and commits both
/// together, or neither. Almost every change is an `AuditedOperation`, whose type names its one
/// action; `TransitionAccount` and `AdvanceOrder` each make one of several moves and need their
/// move's permission.
package protocol AuditedChange: Sendable {
    associatedtype Output: Sendable
    /// The permission of `policies/access.yaml` this call needs.
    var permission: Action { get }
    func perform(in unit: UnitOfWork) async throws -> Audited<Output>
}

/// A use case that changes data (`CreateTenant`, `SyncCustomer`, …) under the one action its type
/// names, which is the permission of every call.
package protocol AuditedOperation: UseCase, AuditedChange {
    associatedtype Output  // restated so conformers' `perform` infers it
    func perform(in unit: UnitOfWork) async throws -> Audited<Output>
}

extension AuditedOperation {
    package var permission: Action { Self.action }
}

/// What a use case runs with: the transaction's connection, who acts, the logger, the instant
/// the unit of work started (one "now" for all its rules) and where new ids come from. Tests
/// control both through `Database.clock` and `Database.ids`.
package struct UnitOfWork: Sendable {
    package let connection: PostgresConnection
    package let context: OperationContext
    package let logger: Logger
    /// The unit's one "now", taken from `Database.clock` when it started.
    package let now: Date
    package let ids: IDGenerator

    package var principal: Principal { context.principal }
    package var policies: PolicySet { context.policies }

    /// A new id for a row this unit creates.
    package func newID() -> UUID { ids.next() }

    /// The principal's tenant when it is not the platform's; nil for the platform, which reads
    /// every tenant's. A query's own filter (so it uses the tenant's index), besides row-level security.
    package var tenantScope: UUID? { principal.tenantID == platformTenantID ? nil : principal.tenantID }

    package init(connection: PostgresConnection, context: OperationContext, logger: Logger, now: Date, ids: IDGenerator)
    {
        (self.connection, self.context, self.logger, self.now, self.ids) = (connection, context, logger, now, ids)
    }
}

extension OperationContext {
    /// Throws `forbidden` unless `policies/access.yaml` grants `action` to the principal's role, and
    /// `insufficient_scope` (403) unless its credential holds the action's scope: the one
    /// permission check, called by the runners (and by a handler that refuses before it reads a
    /// large upload, the runner checking again).
    package func permit(_ action: Action) throws {
        guard policies.access.allows(principal.role, action) else { throw DomainError.forbidden(action) }
        guard policies.access.holdsScope(principal, action) else {
            let scope = policies.access.scope(of: action) ?? ""
            throw DomainError.forbiddenTarget(
                action, code: "insufficient_scope",
                detail: "The credential does not hold the scope '\(scope)' that '\(action.rawValue)' needs.")
        }
    }

    /// `permit(_:)` with the action a use case's type names (queries, staged operations).
    package func permit<Case: UseCase>(_ useCase: Case.Type) throws { try permit(Case.action) }
}

extension Database {
    /// Checks the policy and runs `query` in the context's transaction.
    package func read<Q: Query>(_ query: Q, context: OperationContext) async throws -> Q.Output {
        try context.permit(Q.self)
        return try await readAsSystem(query, context: context)
    }

    /// Runs a query the system makes on its own (a background service): no policy check.
    package func readAsSystem<Q: Query>(_ query: Q, context: OperationContext) async throws -> Q.Output {
        try await transaction(for: context) { connection in try await query.read(in: unit(connection, context)) }
    }

    /// Like `read(_:context:)`, with the answer shared for up to `maxAge` among principals of the
    /// same tenant and role (`ReadCache`: never across tenants; a change committed through this
    /// `Database` shows at once). The policy is checked on every call.
    package func read<Q: CacheableQuery>(_ query: Q, context: OperationContext, maxAge: Duration) async throws
        -> Q.Output
    where Q.Output: Sendable {
        try context.permit(Q.self)
        let key = "\(Q.action.rawValue)|\(context.principal.tenantID)|\(context.principal.role)|\(query.cacheKey)"
        return try await readCache.value(key, maxAge: maxAge, now: clock.now()) {
            try await transaction(for: context) { connection in try await query.read(in: unit(connection, context)) }
        }
    }

    /// Checks the policy, runs `operation` in one transaction and appends its audit events there.
    package func run<Operation: AuditedChange>(_ operation: Operation, context: OperationContext) async throws
        -> Operation.Output
    {
        try await run(operation, context: context) { _, output in output }
    }

    /// Like `run(_:context:)`, with `finish` called in the same transaction after the audit
    /// append (where the idempotency record is written).
    package func run<Operation: AuditedChange, Result: Sendable>(
        _ operation: Operation, context: OperationContext,
        finish: (PostgresConnection, Operation.Output) async throws -> Result
    ) async throws -> Result {
        try context.permit(operation.permission)
        if let held = operation as? any ApprovalGated, held.needsApproval(context.policies) != nil {
            throw DomainError.conflict(
                code: "approval_required",
                detail: "This change needs a second person's approval (policies/approvals.yaml): request it instead.")
        }
        return try await performAudited(operation, context: context, finish: finish)
    }

    /// Runs an operation the system performs on its own (bootstrap, demo data, timed lock
    /// expiry): no policy check, events still appended in the same transaction.
    package func runAsSystem<Operation: AuditedChange>(_ operation: Operation, context: OperationContext)
        async throws -> Operation.Output
    {
        try await performAudited(operation, context: context) { _, output in output }
    }

    /// A step of a job that runs both ways: for the context's principal (`run(_:context:)`, policy
    /// checked) from the API or the CLI, or as the system (`runAsSystem`) from a service of `serve`.
    package func run<Operation: AuditedChange>(_ operation: Operation, context: OperationContext, asSystem: Bool)
        async throws -> Operation.Output
    {
        try await asSystem ? runAsSystem(operation, context: context) : run(operation, context: context)
    }

    /// A query of a job that runs both ways (as `run(_:context:asSystem:)`).
    package func read<Q: Query>(_ query: Q, context: OperationContext, asSystem: Bool) async throws -> Q.Output {
        try await asSystem ? readAsSystem(query, context: context) : read(query, context: context)
    }

    private func performAudited<Operation: AuditedChange, Result: Sendable>(
        _ operation: Operation, context: OperationContext,
        finish: (PostgresConnection, Operation.Output) async throws -> Result
    ) async throws -> Result {
        if context.transaction?.isReadOnly == true {
            throw DomainError.inconsistent("\(Operation.self) is a change; a read-only request (GET) cannot make it")
        }
        return try await transaction(for: context) { connection in
            let audited = try await operation.perform(in: unit(connection, context))
            for event in AuditRecord.appendOrder(audited.events) {
                try await event.append(context: context, on: connection, logger: logger)
            }
            return try await finish(connection, audited.output)
        }
    }

    package func unit(_ connection: PostgresConnection, _ context: OperationContext) -> UnitOfWork {
        UnitOfWork(connection: connection, context: context, logger: logger, now: clock.now(), ids: ids)
    }
}

/// A stored entity's persistence in one place (`Customer+Postgres.swift`, …): the columns a
/// query selects and the decoding of exactly those columns, declared together. Decoding throws
/// on an unknown enum value (`init(known:)`), never falls back.
package protocol RowDecodable: Sendable {
    /// The select list `init(row:)` reads, in order.
    static var columns: String { get }
    init(row: PostgresRow) throws
}

extension RowDecodable {
    /// `columns` with `alias.` before each column, for a statement that joins its table.
    package static func columns(of alias: String) -> String {
        columns.split(separator: ",").map { alias + "." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .joined(separator: ", ")
    }
}

/// How many rows a prepared page statement fetches, written into its SQL as a literal, so that
/// PostgreSQL keeps the statement's one generic plan (with `LIMIT $n` it plans every execution
/// anew: docs/decisions/list-pages-planned-once.md).
package protocol PageFetch { static var rows: Int { get } }

/// Which rows a prepared page statement holds: `name` tells its statements apart, `filter` is
/// its condition (each page type documents which parameters it reads).
package protocol PageShape {
    static var name: String { get }
    static var filter: String { get }
}

package enum PageFetches {
    /// The smallest `PageFetch` that holds `limit` rows (the largest when none does).
    package static func smallest(holding limit: Int) -> any PageFetch.Type {
        let fetches: [any PageFetch.Type] = [DefaultPageFetch.self, HundredPageFetch.self, LargestPageFetch.self]
        return fetches.first { limit <= $0.rows } ?? LargestPageFetch.self
    }
}

/// The default page (50 rows) and one more, which tells whether another page follows.
package enum DefaultPageFetch: PageFetch { package static let rows = 51 }

/// A page of 100 rows (a top-100 leaderboard) and one more.
package enum HundredPageFetch: PageFetch { package static let rows = 101 }

/// The largest page (500 rows) and one more.
package enum LargestPageFetch: PageFetch { package static let rows = 501 }

/// A row's cells read in select-list order, each as the concrete type the caller names: decoding
/// cell by cell is specialized at each call, where a tuple decode of a wide row goes through
/// generic metadata at run time (docs/decisions/orders-page-from-rows.md).
package struct RowCells {
    private var cells: PostgresRow.Iterator
    private let entity: String

    /// The cells of `row`, which holds an `entity` (named in the error when a column is missing).
    package init(_ row: PostgresRow, of entity: String) {
        cells = row.makeIterator()
        self.entity = entity
    }

    /// The next cell as `T` (`Optional` for a column that may be NULL).
    /// - Throws: `DomainError.inconsistent` when the row has no more cells; a decoding error when
    ///   the cell is not a `T`.
    package mutating func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        guard let cell = cells.next() else {
            throw DomainError.inconsistent("a row of \(entity) has fewer columns than its select list")
        }
        return try cell.decode(T.self)
    }
}

extension UnitOfWork {
    /// The rows of `query` (parameters interpolated, so PostgreSQL numbers them), decoded as `T`.
    package func all<T: RowDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> [T] {
        try await all(query, T.init(row:))
    }

    /// Every row of `query`, each decoded by `decode` (a scalar or a tuple).
    package func all<T>(_ query: PostgresQuery, _ decode: (PostgresRow) throws -> T) async throws -> [T] {
        var items: [T] = []
        for try await row in try await connection.send(query, logger: logger) { items.append(try decode(row)) }
        return items
    }

    /// The rows of a prepared statement (planned once per connection: for hot reads whose generic
    /// plan is as good as a custom one).
    package func rows<S: PostgresPreparedStatement>(_ statement: S) async throws -> [S.Row] {
        try await connection.rows(statement, logger: logger)
    }

    /// At most `limit` rows of a prepared page: `fetch` runs the page's statement with the
    /// smallest `PageFetch` that holds `limit` rows, and the rows past `limit` are dropped.
    package func page<Row>(limit: Int, _ fetch: (any PageFetch.Type) async throws -> [Row]) async throws -> [Row] {
        let rows = try await fetch(PageFetches.smallest(holding: limit))
        return rows.count > limit ? Array(rows.prefix(limit)) : rows
    }

    /// Calls `body` with each of the first `limit` rows of a prepared statement as they arrive
    /// (the rest are read and dropped), without collecting them.
    /// - Throws: `DomainError.unavailable` at once when the connection is closed (see `PostgresConnection.rows`).
    package func eachRow<S: PostgresPreparedStatement>(_ statement: S, limit: Int, _ body: (PostgresRow) throws -> Void)
        async throws
    where S.Row == PostgresRow {
        guard !connection.isClosed else { throw DomainError.unavailable }
        var count = 0
        for try await row in try await connection.execute(statement, logger: logger) where count < limit {
            count += 1
            try body(row)
        }
    }

    /// The first row of `query` decoded as `T`, or nil when there is none.
    package func first<T: RowDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> T? {
        try await first(query, T.init(row:))
    }

    /// The row `query` returns (its first), decoded as `T`.
    /// - Throws: `missing` when it returns none (a row not visible, a conflict an insert skipped).
    package func one<T: RowDecodable>(
        _ query: PostgresQuery, as type: T.Type = T.self, else missing: @autoclosure () -> any Error
    )
        async throws -> T
    {
        guard let row = try await first(query, as: type) else { throw missing() }
        return row
    }

    /// The first row of `query` decoded by `decode` (for a scalar or a tuple), or nil.
    package func first<T>(_ query: PostgresQuery, _ decode: (PostgresRow) throws -> T) async throws -> T? {
        try await firstRow(query, on: connection, logger: logger, decode)
    }

    /// The row of `from` whose `id` column is `id`, decoded as `T`; with `forUpdate`, locked
    /// until the unit of work ends. `from` may join other tables to the one row: `alias` then
    /// names the table whose `id` it is (and the only one locked).
    /// - Throws: `DomainError.notFound(what)` when it does not exist or is not visible.
    package func byID<T: RowDecodable>(
        _ from: String, alias: String? = nil, _ id: UUID, forUpdate: Bool = false, notFound what: String
    ) async throws -> T {
        let key = alias.map { "\($0).id" } ?? "id"
        let lock = forUpdate ? " FOR UPDATE" + (alias.map { " OF \($0)" } ?? "") : ""
        let query: PostgresQuery =
            "SELECT \(unescaped: T.columns) FROM \(unescaped: from) WHERE \(unescaped: key) = \(id)\(unescaped: lock)"
        guard let row = try await first(query, as: T.self) else { throw DomainError.notFound(what) }
        return row
    }

    /// A page of `table`'s rows, newest first by (created_at, id), after the keyset `after` (from
    /// the newest without it); with `owner`, only the rows whose `owner.column` is `owner.id`.
    package func newestFirst<T: RowDecodable>(
        _ table: String, owner: (column: String, id: UUID)? = nil, after: (createdAt: Date, id: UUID)?, limit: Int,
        as type: T.Type = T.self
    )
        async throws -> [T]
    {
        // Without a cursor, a keyset after every row.
        let before =
            after ?? (
                Date.distantFuture,
                UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
            )
        // A UUID's text is hex digits and dashes alone: written into the statement, it plans as a constant.
        let ownerFilter = owner.map { " AND \($0.column) = '\($0.id.uuidString)'" } ?? ""
        return try await all(
            """
            SELECT \(unescaped: T.columns) FROM \(unescaped: table) WHERE (created_at, id) < (\(before.createdAt),
                \(before.id))\(unescaped: ownerFilter)
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """)
    }

    /// Runs `query` for its effect and drains its rows (an error raised while rows are produced arrives with them).
    package func execute(_ query: PostgresQuery) async throws {
        for try await _ in try await connection.send(query, logger: logger) {}
    }
}
