import Foundation
import Logging
import ServiceLifecycle
import BackofficePlatform

/// How many cases are open and how long the oldest has waited (`OpenCaseFigures`).
package struct OpenCaseFigures: Query {
    package static let action: Action = "moderation.queue"

    package init() {}

    package func read(in unit: UnitOfWork) async throws -> (open: Int, oldestSeconds: Double) {
        try await unit.first(
            """
            SELECT count(*), coalesce(extract(epoch FROM \(unit.now) - min(opened_at)), 0)::float8
            FROM moderation_cases WHERE status = 'open'
            """
        ) { row in
            let (count, seconds) = try row.decode((Int64, Double).self)
            return (Int(count), seconds)
        } ?? (0, 0)
    }
}

/// Counts the open moderation cases and the oldest one's age every `interval` for `/metrics`
/// (`backoffice_moderation_open_cases`, `backoffice_moderation_oldest_open_case_seconds`).
/// Stops on graceful shutdown.
package struct ModerationGaugesService: Service {
    let database: Database
    let policies: PolicySet
    let interval: Duration

    package init(database: Database, policies: PolicySet, interval: Duration) {
        (self.database, self.policies, self.interval) = (database, policies, interval)
    }

    package func run() async throws {
        await repeatEvery(interval, logger: database.logger, failure: "counting open moderation cases failed") {
            try await count()
        }
    }

    /// Sets the gauges from one count.
    package func count() async throws {
        let figures = try await database.readAsSystem(
            OpenCaseFigures(), context: .system("moderation-gauges", policies: policies))
        ServiceMetrics.moderationOpenCases.record(figures.open)
        ServiceMetrics.moderationOldestOpenSeconds.record(figures.oldestSeconds)
    }
}
