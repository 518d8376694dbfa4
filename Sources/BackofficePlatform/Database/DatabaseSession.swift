import Foundation
import Logging
import PostgresNIO

extension Database {
    /// Runs `body` with a short-lived pool (for CLI administration, demo data and tests), then
    /// shuts it down. Units of work take "now" from `clock`.
    package static func with<T: Sendable>(
        url: DatabaseURL, logger: Logger, clock: any WallClock = SystemWallClock(), maximumConnections: Int = 4,
        limits: PoolLimits = PoolLimits(), _ body: @Sendable (Database) async throws -> T
    ) async throws -> T {
        var limits = limits
        limits.maximumConnections = maximumConnections
        let client = PostgresClient(configuration: url.clientConfiguration(limits), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            // Start the pool before anything leases from it (a lease before `run()` is a warning).
            let (started, signal) = AsyncStream<Void>.makeStream()
            group.addTask {
                signal.finish()
                await client.run()
            }
            for await _ in started {}
            await Task.yield()
            defer { group.cancelAll() }
            return try await body(Database(client: client, logger: logger, clock: clock, limits: limits))
        }
    }
}
