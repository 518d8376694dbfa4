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
