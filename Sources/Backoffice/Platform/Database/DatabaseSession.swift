import Foundation
import Logging
import PostgresNIO

extension Database {
    /// Runs `body` with a short-lived pool (for CLI administration and demo data), then shuts it down.
    public static func with<T: Sendable>(url: DatabaseURL, logger: Logger, _ body: @Sendable (Database) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: url.clientConfiguration(maximumConnections: 4), backgroundLogger: logger)
        // The first lease may come before `run()` has started, which postgres-nio reports as a
        // warning although it then waits correctly: keep only errors from this short-lived pool.
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .error)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(Database(client: client, logger: quiet))
        }
    }

    /// A context for changes the system makes on its own.
    public static func systemContext(_ purpose: String, policies: PolicySet) -> OperationContext {
        OperationContext(principal: .system, requestID: "\(purpose)-\(UUID().uuidString.lowercased())", sourceIP: nil, policies: policies)
    }
}

/// `backoffice admin bootstrap`: the first platform admin, made directly in the database.
public enum Bootstrap {
    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates a platform admin and a token for it, both audited with the system as actor.
    /// - Throws: `Refused` when an active platform admin exists already (use `operators create`).
    public static func platformAdmin(email: String, database: Database, policies: PolicySet, force: Bool = false) async throws -> (
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
