import Foundation
import Logging
import PostgresNIO
import BackofficePlatform

/// The log of reads of health data (`health_access_events`): append-only and hash-chained with the
/// audit log's machinery (16 lanes `access:NN`, `hash = SHA-256(prev_hash ‖ canonical)`), kept
/// apart from the change log. An export line is an event's fields from its columns plus its id,
/// links and canonical text, the shape `audit verify --offline` verifies: a changed column, a
/// changed canonical text, a deleted, inserted or reordered event all break it.
enum AccessLog {
    /// Where every lane ends (`health_access_heads`).
    static func heads(on connection: PostgresConnection, logger: Logger) async throws -> [ChainHead] {
        try await AuditLog.chainPositions("health_access_heads", on: connection, logger: logger)
    }

    /// An event as the verifier sees it, from its export line.
    static func event(line: String) throws -> ChainedEvent {
        guard let event = OfflineAuditVerifier.event(from: Data(line.utf8)) else {
            throw DomainError.inconsistent("an access event's line is not an exported event")
        }
        return event
    }
}

/// Verifies every lane of the access log (`health_profiles.verify_access_log`) from one consistent
/// snapshot: each event's fields against its canonical text, each hash from its link, the lanes'
/// ends against the heads table and `checkpoint` (kept heads, optional).
package struct VerifyAccessLog: Query {
    package static let action: Action = "health_profiles.verify_access_log"
    let database: Database
    let checkpoint: [ChainHead]
    let pageSize: Int

    package init(database: Database, checkpoint: [ChainHead] = [], pageSize: Int = 5_000) {
        (self.database, self.checkpoint, self.pageSize) = (database, checkpoint, pageSize)
    }

    package func read(in unit: UnitOfWork) async throws -> AuditLog.Report {
        let (logger, pageSize, checkpoint) = (database.logger, pageSize, checkpoint)
        return try await database.transaction(for: unit.context.principal, isolation: "REPEATABLE READ, READ ONLY") {
            connection in
            let heads = try await AccessLog.heads(on: connection, logger: logger)
            var chains = InterleavedChainVerifier(checkpoint: checkpoint)
            var after = ("", Int64(0))
            while true {
                var read = 0
                for try await (chain, seq, line) in try await connection.send(
                    """
                    SELECT e.chain, e.seq, health_access_line(e) FROM health_access_events e
                    WHERE (e.chain, e.seq) > (\(after.0), \(after.1)) ORDER BY e.chain, e.seq LIMIT \(pageSize)
                    """, logger: logger
                ).decode((String, Int64, String).self) {
                    chains.feed(try AccessLog.event(line: line))
                    (after, read) = ((chain, seq), read + 1)
                }
                if read < pageSize { break }
            }
            let result = chains.finish(heads: heads)
            return AuditLog.Report(chains: result.chains, events: result.events, failure: result.failure)
        }
    }
}

/// Every access event in `[since, until)` as JSON lines, oldest first, streamed page by page
/// (`health_profiles.export_access_log`): what `ops/audit-daily` archives, verifies offline and seals.
package struct ExportAccessLog: Query {
    package static let action: Action = "health_profiles.export_access_log"
    let database: Database
    let since: Date?
    let until: Date?

    package init(database: Database, since: Date?, until: Date?) {
        (self.database, self.since, self.until) = (database, since, until)
    }

    package func read(in unit: UnitOfWork) async throws -> ExportPages<Int64> {
        let (since, until, logger) = (since, until, database.logger)
        return ExportPages(database: database, context: unit.context, start: [], after: 0) { afterID, context in
            var (bytes, last, count) = ([UInt8](), afterID, 0)
            for try await (id, line) in try await context.connection.send(
                """
                SELECT e.id, health_access_line(e) FROM health_access_events e
                WHERE e.id > \(afterID) AND (\(since)::timestamptz IS NULL OR (e.occurred_at >= \(since)
                    AND e.id >= (SELECT min(f.id) FROM health_access_events f WHERE f.occurred_at >= \(since))))
                  AND (\(until)::timestamptz IS NULL OR e.occurred_at < \(until))
                ORDER BY e.id LIMIT 1000
                """, logger: logger
            ).decode((Int64, String).self) {
                bytes.append(contentsOf: line.utf8)
                bytes.append(10)
                (last, count) = (id, count + 1)
            }
            return (bytes, count < 1000 ? nil : last)
        }
    }
}
