import BackofficePlatform
import Foundation
import Logging
import ServiceLifecycle

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
        await repeatEvery(interval, on: timers, logger: database.logger, failure: "reconciling payments failed") {
            let report = try await ReconcilePayments(olderThanMinutes: olderThanMinutes, payments: payments).run(
                database, context: OperationContext.system("reconciliation", policies: policies), system: true)
            guard report.checked > 0 else { return }
            database.logger.info(
                "payments reconciled",
                metadata: [
                    "checked": "\(report.checked)", "completed": "\(report.completed.count)",
                    "failed": "\(report.cancelled.count)", "still_pending": "\(report.stillPending)",
                ])
        }
    }
}

/// Reconciles the invoices with the provider's payments every `interval` (daily in `serve`), as
/// the system: the differences are listed in the run's audit event and logged as a count.
package struct BillingReconciliationService: Service {
    let database: Database
    let policies: PolicySet
    let payments: any PaymentGateway
    let interval: Duration

    package init(database: Database, policies: PolicySet, payments: any PaymentGateway, interval: Duration) {
        (self.database, self.policies, self.payments, self.interval) = (database, policies, payments, interval)
    }

    package func run() async throws {
        await repeatEvery(interval, logger: database.logger, failure: "reconciling invoices failed") {
            let report = try await ReconcileInvoices(days: nil, payments: payments).run(
                database, context: OperationContext.system("billing-reconciliation", policies: policies), system: true)
            let metadata: Logger.Metadata = [
                "invoices": "\(report.invoices)", "provider_charges": "\(report.providerCharges)",
                "differences": "\(report.differences.count)", "settled": "\(report.settled)",
            ]
            if report.differences.count > report.settled {
                database.logger.warning("invoices reconciled: differences left for a person", metadata: metadata)
            } else {
                database.logger.info("invoices reconciled", metadata: metadata)
            }
        }
    }
}
