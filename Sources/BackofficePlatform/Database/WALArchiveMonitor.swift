import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle

/// Watches the primary's continuous archiving (`pg_stat_archiver`) while the service runs, so an
/// archive that cannot be reached shows on `/metrics` while writes go on (PostgreSQL keeps the WAL
/// and retries; the alert `BackofficeWALArchiveFailing` names it):
/// `backoffice_wal_archive_failing` is 1 when the newest attempt to archive a segment failed, and
/// `backoffice_wal_archive_pending_seconds` is how long ago the last segment was archived while a
/// newer attempt failed (0 when archiving keeps up). Both stay 0 where archiving is off.
package struct WALArchiveMonitor: Service {
    package let client: PostgresClient
    package let interval: Duration
    package let timeout: Duration
    package let logger: Logger

    package init(client: PostgresClient, interval: Duration = .seconds(5), timeout: Duration, logger: Logger) {
        (self.client, self.interval, self.timeout, self.logger) = (client, interval, timeout, logger)
    }

    package func run() async throws {
        await repeatEvery(interval, logger: logger, failure: "the WAL archive check failed") { try await check() }
    }

    /// One check: reads the archiver's state and records it.
    package func check() async throws {
        let state = try await client.withConnection(within: timeout, timers: EventLoopTimers()) { connection in
            try await firstRow(
                """
                SELECT coalesce(last_failed_time > coalesce(last_archived_time, '-infinity'), false),
                       coalesce(extract(epoch FROM now() - last_archived_time)::float8, 0)
                FROM pg_stat_archiver
                """, on: connection, logger: logger
            ) { try $0.decode((Bool, Double).self) }
        }
        let (failing, age) = state ?? (false, 0)
        ServiceMetrics.walArchiveFailing.record(failing ? 1 : 0)
        ServiceMetrics.walArchivePendingSeconds.record(failing ? age : 0)
    }
}

extension ServiceMetrics {
    /// 1 when the primary's newest attempt to archive a WAL segment failed (`pg_stat_archiver`).
    package static let walArchiveFailing = series { Gauge(label: "backoffice_wal_archive_failing") }
    /// While archiving fails, how long ago the last segment was archived (the data a disaster
    /// now would lose grows with it); 0 when archiving keeps up.
    package static let walArchivePendingSeconds = series { Gauge(label: "backoffice_wal_archive_pending_seconds") }
}
