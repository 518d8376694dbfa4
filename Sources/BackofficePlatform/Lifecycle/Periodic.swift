import Logging
import ServiceLifecycle

/// Runs `work` every `interval` until graceful shutdown, waiting one interval before the first run
/// (so the connection pool, a sibling service in the same group, is running first). A failed run is
/// logged as `failure` with the error's type, and the next one comes on time. The waits sleep on
/// `timers` (`ManualTimers` in tests).
package func repeatEvery(
    _ interval: Duration, on timers: any Timers = EventLoopTimers(), logger: Logger, failure: Logger.Message,
    _ work: () async throws -> Void
) async {
    try? await gracefulShutdown(sleeping: interval, on: timers)
    while !Task.isShuttingDownGracefully && !Task.isCancelled {
        do { try await work() } catch { logger.warning(failure, metadata: ["error_type": "\(type(of: error))"]) }
        try? await gracefulShutdown(sleeping: interval, on: timers)
    }
}

/// Drains a queue until graceful shutdown: runs `work` (how many items it took) again at once
/// while it takes some, and after `interval` when it took none or failed (logged as `failure`
/// with the error). Waits a moment before the first run, so that sibling services start first.
package func drainEvery(
    _ interval: Duration, logger: Logger, failure: Logger.Message, _ work: () async throws -> Int
) async {
    try? await gracefulShutdown(sleeping: .milliseconds(200))
    while !Task.isShuttingDownGracefully && !Task.isCancelled {
        let taken: Int
        do { taken = try await work() } catch {
            logger.warning(failure, metadata: ["error": "\(error)"])
            taken = 0
        }
        if taken == 0 { try? await gracefulShutdown(sleeping: interval) }
    }
}
