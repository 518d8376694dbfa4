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

    /// A context for changes the system makes on its own.
    package static func systemContext(_ purpose: String, policies: PolicySet) -> OperationContext {
        OperationContext(principal: .system, requestID: "\(purpose)-\(UUID().uuidString.lowercased())", sourceIP: nil, policies: policies)
    }
}

/// `backoffice admin bootstrap`: the first platform admin, made directly in the database.
package enum Bootstrap {
    package struct Refused: Error, CustomStringConvertible {
        package let description: String
    }

    /// Creates a platform admin and a token for it, both audited with the system as actor.
    /// - Throws: `Refused` when an active platform admin exists already (use `operators create`).
    package static func platformAdmin(email: String, database: Database, policies: PolicySet, force: Bool = false) async throws -> (
        Operator, TokenSecret
    ) {
        let context = Database.systemContext("bootstrap", policies: policies)
        if !force {
            let existing = try await database.transaction(for: .system) { connection in
                try await firstRow(
                    "SELECT count(*) FROM operators WHERE role = 'platform_admin' AND status = 'active'", on: connection, logger: database.logger
                ) { try $0.decode(Int.self) } ?? 0
            }
            if existing > 0 {
                throw Refused(
                    description: "a platform admin exists already: ask one for a token (backoffice tokens create) or add one with operators create")
            }
        }
        let admin = try await database.runAsSystem(CreateOperator(email: email, role: .platformAdmin, tenantID: nil), context: context)
        let (_, secret) = try await database.runAsSystem(CreateToken(operatorID: admin.id, name: "bootstrap", expiresInHours: nil), context: context)
        return (admin, secret)
    }
}
