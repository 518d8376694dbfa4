import BackofficePlatform
import Foundation
import PostgresNIO

// Reads of tenants, operators and tokens, limited by row-level security to what the principal's tenant sees.

/// The principal's operator and token (`session.read`, `GET /v1/me`).
package struct CurrentSession: Query {
    package static let action: Action = "session.read"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> Session {
        guard let tokenID = unit.principal.tokenID else { throw DomainError.unauthenticated }
        guard
            let session = try await unit.first(
                """
                SELECT o.id, o.email, o.role, t.tenant_id, t.id, t.name, t.expires_at
                FROM tokens t JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id WHERE t.id =
                    \(tokenID)
                """,
                { row in
                    let c = try row.decode((UUID, String, String, UUID, UUID, String, Date).self)
                    return Session(
                        operatorID: c.0, email: c.1, role: try Role(known: c.2), tenantID: c.3, tokenID: c.4,
                        tokenName: c.5, expiresAt: c.6)
                })
        else { throw DomainError.unauthenticated }
        return session
    }
}

/// Partner tenants by slug after `afterSlug` (`tenants.list`).
package struct ListTenants: Query {
    package static let action: Action = "tenants.list"
    package let afterSlug: String
    package let limit: Int

    package func read(in unit: UnitOfWork) async throws -> [Tenant] {
        try await unit.all(
            """
            SELECT \(unescaped: Tenant.columns) FROM tenants WHERE id <> \(platformTenantID) AND slug > \
            \(afterSlug) ORDER BY slug LIMIT \(limit)
            """
        )
    }
}

/// One tenant (`tenants.read`).
package typealias GetTenant = GetByID<Tenant>

extension Tenant: ReadByID {
    package static let table = "tenants"
    package static let readAction: Action = "tenants.read"
}

/// Operators by id after `afterID`, of one tenant (`owner`) or of all (`operators.list`).
package typealias ListOperators = ListByID<Operator>

extension Operator: ListedByID {
    package static let table = "operators"
    package static let ownerColumn = "tenant_id"
    package static let listAction: Action = "operators.list"
}

/// Tokens' metadata by id after `afterID`, of one operator (`owner`) or of all (`tokens.list`).
package typealias ListTokens = ListByID<Token>

extension Token: ListedByID {
    package static let table = "tokens"
    package static let ownerColumn = "operator_id"
    package static let listAction: Action = "tokens.list"
}
