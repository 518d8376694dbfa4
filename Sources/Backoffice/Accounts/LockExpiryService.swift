import BackofficePlatform
import Foundation
import Logging
import ServiceLifecycle

/// Lifts timed locks whose `until` has passed, every `interval`, as the system actor (each lifting
/// is an audit event). Stops on graceful shutdown.
package struct LockExpiryService: Service {
    let database: Database
    let policies: PolicySet
    let interval: Duration

    package func run() async throws {
        await repeatEvery(interval, logger: database.logger, failure: "lifting expired locks failed") {
            try await liftDue()
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
