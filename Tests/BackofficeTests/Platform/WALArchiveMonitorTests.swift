import Foundation
import Logging
import PostgresNIO
import Testing

@testable import BackofficePlatform

@Suite("WAL archive monitor")
struct WALArchiveMonitorTests {
    @Test(
        """
        the service's own role reads the archiver's state (pg_stat_archiver) and /metrics carries both gauges: \
        0 on a database that archives nothing (the fault suite's archive-stall shows them at 1)
        """
    )
    func readsTheArchiverAsTheServiceRole() async throws {
        try await TestEnvironment.with { env in
            let client = PostgresClient(
                configuration: env.appURL.clientConfiguration(.forTests), backgroundLogger: testLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                ServiceMetrics.walArchiveFailing.record(1)  // so a check that records nothing fails the test
                try await WALArchiveMonitor(client: client, timeout: .seconds(5), logger: testLogger).check()
                let metrics = ServiceMetrics.registry.emitToString()
                #expect(metrics.contains("backoffice_wal_archive_failing 0"), "\(metrics)")
                #expect(metrics.contains("backoffice_wal_archive_pending_seconds 0"))
            }
        }
    }
}
