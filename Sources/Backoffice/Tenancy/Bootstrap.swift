import BackofficePlatform
import Foundation
import PostgresNIO

/// `backoffice admin bootstrap`: the first platform admin, made directly in the database.
package enum Bootstrap {
    package struct Refused: Error, CustomStringConvertible {
        package let description: String
    }

    /// Creates a platform admin and a token for it, both audited with the system as actor.
    /// - Throws: `Refused` when an active platform admin exists already (use `operators create`).
    package static func platformAdmin(email: String, database: Database, policies: PolicySet, force: Bool = false)
        async throws -> (
            Operator, TokenSecret
        )
    {
        let context = OperationContext.system("bootstrap", policies: policies)
        if !force {
            let existing = try await database.transaction(for: .system) { connection in
                try await firstRow(
                    "SELECT count(*) FROM operators WHERE role = 'platform_admin' AND status = 'active'",
                    on: connection, logger: database.logger
                ) { try $0.decode(Int.self) } ?? 0
            }
            if existing > 0 {
                throw Refused(
                    description:
                        """
                        a platform admin exists already: ask one for a token (backoffice tokens create) or add \
                        one with operators create
                        """
                )
            }
        }
        let admin = try await database.runAsSystem(
            CreateOperator(email: email, role: .platformAdmin, tenantID: nil), context: context)
        let (_, secret) = try await database.runAsSystem(
            CreateToken(operatorID: admin.id, name: "bootstrap", expiresInHours: nil), context: context)
        return (admin, secret)
    }
}
