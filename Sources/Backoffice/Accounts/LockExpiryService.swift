import Foundation
import Logging
import ServiceLifecycle

/// Lifts timed locks whose `until` has passed, every `interval`, as the system actor (each lifting
/// is an audit event). Stops on graceful shutdown.
package struct LockExpiryService: Service {
    let database: Database
    let policies: PolicySet
    let interval: Duration

    /// Waits one interval before the first check, so the connection pool (a sibling service in
    /// the same group) is running before this leases from it.
    package func run() async throws {
        try? await gracefulShutdown(sleeping: interval)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await liftDue()
            } catch {
                database.logger.warning("lifting expired locks failed", metadata: ["error_type": "\(type(of: error))"])
            }
            try? await gracefulShutdown(sleeping: interval)
        }
    }

    /// Lifts every lock due now; returns how many.
    @discardableResult
    package func liftDue() async throws -> Int {
        var total = 0
        while true {
            let context = OperationContext.system("lock-expiry", policies: policies)
            let lifted = try await database.runAsSystem(LiftExpiredLocks(limit: 100), context: context)
            total += lifted.count
            if lifted.count < 100 { return total }
        }
    }
}
