import BackofficePlatform
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// A stored audit event, as read back.
package struct AuditEventRecord: Sendable {
    package var id: Int64
    package var occurredAt: Date
    package var chain: String
    package var seq: Int64
    package var tenantID: UUID
    package var actorID: UUID?
    package var actorRole: String
    package var action: String
    package var targetType: String
    package var targetID: String
    package var requestID: String
    package var sourceIP: String?
    package var reason: String?
    package var before: String?
    package var after: String?
    package var policyDigest: String
    package var prevHash: String
    package var hash: String
    /// The credential (API token) the change was made with; nil for the system and older events.
    package var tokenID: UUID?
    /// The console session the change was made in; nil for the API, the system and older events.
    package var sessionID: UUID?

    /// Where the change came from: the console (a session), the API (a token), or the system.
    package var via: String { sessionID != nil ? "console" : tokenID != nil ? "api" : "system" }
}

/// Filters of `audit list` and `audit export`; every one optional.
package struct AuditFilter: Sendable {
    package var tenantID: UUID?
    package var actorID: UUID?
    package var action: String?
    package var targetID: String?
    package var since: Date?
    package var until: Date?

    package init(
        tenantID: UUID? = nil, actorID: UUID? = nil, action: String? = nil, targetID: String? = nil, since: Date? = nil,
        until: Date? = nil
    ) {
        (self.tenantID, self.actorID, self.action, self.targetID, self.since, self.until) = (
            tenantID, actorID, action, targetID, since, until
        )
    }
}

extension AuditFilter {
    /// `SELECT selecting FROM audit_events` with these filters (all bound parameters), oldest
    /// first, after the keyset `afterID`.
    func query(selecting columns: String, afterID: Int64, limit: Int) -> PostgresQuery {
        """
        SELECT \(unescaped: columns) FROM audit_events
        WHERE id > \(afterID)
          AND (\(tenantID)::uuid IS NULL OR tenant_id = \(tenantID))
          AND (\(actorID)::uuid IS NULL OR actor_id = \(actorID))
          AND (\(action)::text IS NULL OR action = \(action))
          AND (\(targetID)::text IS NULL OR target_id = \(targetID))
          AND (\(since)::timestamptz IS NULL OR occurred_at >= \(since))
          AND (\(until)::timestamptz IS NULL OR occurred_at < \(until))
        ORDER BY id LIMIT \(limit)
        """
    }
}

/// The audit log: appends inside a change's transaction, reads, exports and verifies.
/// Row-level security limits every read to what the principal's tenant may see.
package struct AuditLog: Sendable {
    let database: Database

    package init(database: Database) { self.database = database }

    static let columns = """
        id, occurred_at, chain, seq, tenant_id, actor_id, actor_role, action, target_type, target_id, request_id,
        source_ip, reason, before::text, after::text, policy_digest, encode(prev_hash, 'hex'), encode(hash, 'hex'),
            token_id, session_id
        """

    /// One page of events, oldest first, after the keyset `afterID`.
    static func page(
        _ filter: AuditFilter, afterID: Int64, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws
        -> [AuditEventRecord]
    {
        let query = filter.query(selecting: columns, afterID: afterID, limit: limit)
        var events: [AuditEventRecord] = []
        for try await row in try await connection.send(query, logger: logger) {
            events.append(try decode(row))
        }
        return events
    }

    static func decode(_ row: PostgresRow) throws -> AuditEventRecord {
        let c = try row.decode(
            (
                Int64, Date, String, Int64, UUID, UUID?, String, String, String, String, String, String?, String?,
                String?, String?, String, String,
                String, UUID?, UUID?
            ).self)
        return AuditEventRecord(
            id: c.0, occurredAt: c.1, chain: c.2, seq: c.3, tenantID: c.4, actorID: c.5, actorRole: c.6, action: c.7,
            targetType: c.8,
            targetID: c.9, requestID: c.10, sourceIP: c.11, reason: c.12, before: c.13, after: c.14, policyDigest: c.15,
            prevHash: c.16,
            hash: c.17, tokenID: c.18, sessionID: c.19)
    }

    /// Every matching event as JSON lines, oldest first, fetched in pages of `pageSize` as the
    /// consumer reads (`ExportPages`: each page authenticates the request's token again), so memory
    /// stays constant however long the log is. A line is the jsonb text form of the event's
    /// columns, id, links and the exact `canonical` text its hash covers (so a client can verify
    /// an export without the server), written here from the row (`AuditCanonical.buildExportLine`).
    package func export(_ filter: AuditFilter, context: OperationContext, pageSize: Int = 1000) -> ExportPages<Int64> {
        let logger = database.logger
        return ExportPages(database: database, context: context, start: [], after: 0) { afterID, context in
            let query = filter.query(selecting: StoredEventReader.selectList, afterID: afterID, limit: pageSize)
            var (buffer, reader) = (ByteBuffer(), StoredEventReader())
            var (last, count) = (afterID, 0)
            for try await row in try await context.connection.send(query, logger: logger) {
                guard let id = reader.exportLine(row, into: &buffer) else {
                    throw DomainError.inconsistent("audit export read a row that is not an event record")
                }
                (last, count) = (id, count + 1)
            }
            return (Array(buffer.readableBytesView), count < pageSize ? nil : last)
        }
    }

    /// The head (seq, hash) of every visible chain.
    package func heads(context: OperationContext) async throws -> [ChainHead] {
        try await database.transaction(for: context) { connection in
            try await Self.heads(on: connection, logger: database.logger)
        }
    }

    static func heads(on connection: PostgresConnection, logger: Logger) async throws -> [ChainHead] {
        try await chainPositions("audit_chain_heads", on: connection, logger: logger)
    }

    /// Where archival cut each chain (`audit archive`): verification continues from there.
    static func cuts(on connection: PostgresConnection, logger: Logger) async throws -> [ChainHead] {
        try await chainPositions("audit_archive_cuts", on: connection, logger: logger)
    }

    /// Every chain's position (chain, seq, hash) kept in `table` (`audit_chain_heads`, `audit_archive_cuts`,
    /// `health_access_heads`), by chain.
    static func chainPositions(_ table: String, on connection: PostgresConnection, logger: Logger) async throws
        -> [ChainHead]
    {
        var heads: [ChainHead] = []
        for try await (chain, seq, hash) in try await connection.send(
            "SELECT chain, seq, encode(hash, 'hex') FROM \(unescaped: table) ORDER BY chain", logger: logger
        ).decode((String, Int64, String).self) {
            heads.append(ChainHead(chain: chain, seq: seq, hash: hash))
        }
        return heads
    }

    /// The result of a verification.
    package struct Report: Sendable {
        package let chains: Int
        package let events: Int64
        package let failure: ChainFailure?
    }

    /// Verifies every visible chain from one consistent snapshot, each from its genesis or from
    /// its archival cut: recomputes each event's canonical bytes from its columns (`AuditCanonical`,
    /// here rather than in the database) and its hash from its link, then compares chain ends with
    /// the heads table and `checkpoint`.
    ///
    /// Events are read in id order (the table's own order, so each page reads few pages of the
    /// heap), `pageSize` per statement, every chain verified side by side. When a chain is broken,
    /// they are read again in (tenant, chain, seq) order, where the verifier tells an inserted
    /// event from reordered ones, and that reading names the first bad event.
    package func verify(checkpoint: [ChainHead], context: OperationContext, pageSize: Int = 20_000) async throws
        -> Report
    {
        try await database.transaction(for: context.principal, isolation: "REPEATABLE READ, READ ONLY") { connection in
            let (cuts, heads) = (
                try await Self.cuts(on: connection, logger: database.logger),
                try await Self.heads(on: connection, logger: database.logger)
            )
            var chains = InterleavedChainVerifier(checkpoint: checkpoint, start: cuts)
            try await Self.read(.id, pageSize: pageSize, on: connection, logger: database.logger) { chains.feed($0) }
            let result = chains.finish(heads: heads)
            guard result.failure != nil else {
                return Report(chains: result.chains, events: result.events, failure: nil)
            }
            var verifier = ChainVerifier(checkpoint: checkpoint, start: cuts)
            try await Self.read(.chain, pageSize: pageSize, on: connection, logger: database.logger) {
                verifier.feed($0)
            }
            // This reading decides: ids are not hashed, only seq order is the chain's.
            let failure = verifier.finish(heads: heads, checkpoint: checkpoint)
            return Report(chains: max(verifier.chains, heads.count), events: verifier.events, failure: failure)
        }
    }

    /// The order `read` streams events in.
    enum ReadingOrder { case id, chain }

    /// Streams every visible event to `feed` in `order`, in pages of `pageSize` (keyset on a
    /// unique index), so no statement runs into the statement timeout however long the log is (a
    /// million events in one statement took more than 30 s).
    static func read(
        _ order: ReadingOrder, pageSize: Int, on connection: PostgresConnection, logger: Logger,
        _ feed: (ChainedEvent) -> Void
    ) async throws {
        var reader = StoredEventReader()
        var after: (id: Int64, tenant: UUID, chain: String, seq: Int64)?
        let (select, limit) = ("SELECT \(StoredEventReader.selectList) FROM audit_events", String(pageSize))
        while true {
            let query: PostgresQuery =
                switch (order, after) {
                case (.id, nil): "\(unescaped: select) ORDER BY id LIMIT \(unescaped: limit)"
                case (.id, let after?):
                    "\(unescaped: select) WHERE id > \(after.id) ORDER BY id LIMIT \(unescaped: limit)"
                case (.chain, nil): "\(unescaped: select) ORDER BY tenant_id, chain, seq LIMIT \(unescaped: limit)"
                case (.chain, let after?):
                    """
                    \(unescaped: select) WHERE (tenant_id, chain, seq) > (\(after.tenant), \(after.chain), \
                    \(after.seq)) ORDER BY tenant_id, chain, seq LIMIT \(unescaped: limit)
                    """
                }
            var read = 0
            var last: (row: PostgresRow, event: ChainedEvent)?
            for try await row in try await connection.send(query, logger: logger) {
                guard let event = reader.event(row) else {
                    throw DomainError.inconsistent("audit verify read a row that is not an event record")
                }
                feed(event)
                last = (row, event)
                read += 1
            }
            if let (row, event) = last {
                guard let tenant = reader.tenant(row) else {
                    throw DomainError.inconsistent("audit verify read an event without its tenant")
                }
                after = (event.id, tenant, event.chain, event.seq)
            }
            if read < pageSize { return }
        }
    }
}
