import Foundation
import Logging
import ServiceLifecycle
import BackofficePlatform

/// Reconciles payments every `interval`, as the system (each settled order and each run is an
/// audit event): what a crashed checkout or a lost webhook left unsettled is resolved without a
/// person or a cron job. Stops on graceful shutdown.
package struct ReconciliationService: Service {
    let database: Database
    let policies: PolicySet
    let payments: any PaymentGateway
    let interval: Duration
    let olderThanMinutes: Int
    /// What the waits between runs sleep on (`ManualTimers` in tests).
    let timers: any Timers

    package init(
        database: Database, policies: PolicySet, payments: any PaymentGateway, interval: Duration,
        olderThanMinutes: Int, timers: any Timers = EventLoopTimers()
    ) {
        (self.database, self.policies, self.payments) = (database, policies, payments)
        (self.interval, self.olderThanMinutes, self.timers) = (interval, olderThanMinutes, timers)
    }

    /// Waits one interval before the first run, so the connection pool (a sibling service) runs first.
    package func run() async throws {
        try? await gracefulShutdown(sleeping: interval, on: timers)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let report = try await ReconcilePayments(olderThanMinutes: olderThanMinutes, payments: payments).run(
                    database, context: OperationContext.system("reconciliation", policies: policies), system: true)
                if report.checked > 0 {
                    database.logger.info(
                        "payments reconciled",
                        metadata: [
                            "checked": "\(report.checked)", "completed": "\(report.completed.count)",
                            "failed": "\(report.cancelled.count)",
                            "still_pending": "\(report.stillPending)",
                        ])
                }
            } catch {
                database.logger.warning("reconciling payments failed", metadata: ["error_type": "\(type(of: error))"])
            }
            try? await gracefulShutdown(sleeping: interval, on: timers)
        }
    }
}
