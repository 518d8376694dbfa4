import Foundation
import Logging
import PostgresNIO
import BackofficePlatform

/// Moving old audit events out of the database into the signed daily archives of
/// `ops/audit-daily` (`backoffice audit archive`, run with the tables' owner's URL).
///
/// Guarantees: only events covered by a sealed day are removed, and only when that day ended at
/// least the retention period ago (`audit_events.keep_days`); the seal's signature is checked
/// before anything is touched; the database removes events only up to heads that match its
/// stored events exactly (a database that diverges from the archive is refused, nothing removed);
/// the chains still verify across the cut, online from the cut and offline from the seal
/// (`audit verify --offline --from`); the archival is itself an audit event.
package enum AuditArchive {
    /// One day sealed by `ops/audit-daily`: `audit-YYYY-MM-DD.heads.json` in the archive folder.
    package struct SealedDay: Sendable, Equatable {
        package let day: String
        package let file: URL
    }

    /// What archival removed (or, for a dry run, would remove) per chain.
    package struct Removal: Sendable, Equatable {
        package let chain: String
        package let events: Int64
    }

    /// The sealed days in `folder`, oldest first.
    package static func sealedDays(in folder: URL) throws -> [SealedDay] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).compactMap { name in
            guard name.hasPrefix("audit-"), name.hasSuffix(".heads.json") else { return nil }
            let day = String(name.dropFirst("audit-".count).dropLast(".heads.json".count))
            guard day.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil else { return nil }
            return SealedDay(day: day, file: folder.appendingPathComponent(name))
        }.sorted { $0.day < $1.day }
    }

    /// The newest sealed day that ended at least `keepDays` days before `now` (UTC), if any.
    package static func dayToArchive(_ days: [SealedDay], keepDays: Int, now: Date) -> SealedDay? {
        let calendar = Calendar.utc
        let limit = calendar.date(byAdding: .day, value: -keepDays, to: calendar.startOfDay(for: now))!
        let format = DateFormatter()
        (format.calendar, format.timeZone, format.locale, format.dateFormat) = (
            calendar, calendar.timeZone, Locale(identifier: "en_US_POSIX"), "yyyy-MM-dd"
        )
        return days.last { day in
            guard let start = format.date(from: day.day), let end = calendar.date(byAdding: .day, value: 1, to: start)
            else { return false }
            return end <= limit
        }
    }

    /// Removes every chain's events through `heads` (a sealed day's): one statement, so one
    /// transaction — all of it or, when the database refuses a head, nothing.
    /// - Throws: the database's refusal when a head does not match the stored event.
    package static func cut(
        through heads: [ChainHead], day: String, policyDigest: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Removal] {
        let hashes = heads.map { ByteBuffer(bytes: bytes(hex: $0.hash) ?? []) }
        var removed: [Removal] = []
        for try await (chain, events) in try await connection.send(
            """
            SELECT chain, removed FROM audit_archive_through(\(day)::date, \(heads.map(\.chain))::text[],
                \(heads.map(\.seq))::bigint[],
                \(hashes)::bytea[], \(policyDigest))
            """, logger: logger
        ).decode((String, Int64).self) { removed.append(Removal(chain: chain, events: events)) }
        return removed
    }

    /// What `cut` would remove, without removing anything.
    package static func preview(through heads: [ChainHead], on connection: PostgresConnection, logger: Logger)
        async throws -> [Removal]
    {
        var removed: [Removal] = []
        for try await (chain, events) in try await connection.send(
            """
            SELECT h.chain, count(e.seq) FROM unnest(\(heads.map(\.chain))::text[], \(heads.map(\.seq))::bigint[]) AS
                h(chain, seq)
            LEFT JOIN audit_events e ON e.chain = h.chain AND e.seq <= h.seq GROUP BY h.chain ORDER BY h.chain
            """, logger: logger
        ).decode((String, Int64).self) { removed.append(Removal(chain: chain, events: events)) }
        return removed
    }
}
