import Foundation
import PostgresNIO
import BackofficePlatform

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
package struct GetTenant: Query {
    package static let action: Action = "tenants.read"
    package let id: UUID
    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> Tenant {
        try await unit.byID("tenants", id, notFound: "Tenant \(id.text)")
    }
}

/// Operators by id after `afterID`, optionally of one tenant (`operators.list`).
package struct ListOperators: Query {
    package static let action: Action = "operators.list"
    package let tenantID: UUID?
    package let afterID: UUID
    package let limit: Int

    package func read(in unit: UnitOfWork) async throws -> [Operator] {
        try await unit.all(
            """
            SELECT \(unescaped: Operator.columns) FROM operators
            WHERE (\(tenantID)::uuid IS NULL OR tenant_id = \(tenantID)) AND id > \(afterID) ORDER BY id LIMIT \(limit)
            """)
    }
}

/// Tokens' metadata by id after `afterID`, optionally of one operator (`tokens.list`).
package struct ListTokens: Query {
    package static let action: Action = "tokens.list"
    package let operatorID: UUID?
    package let afterID: UUID
    package let limit: Int

    package func read(in unit: UnitOfWork) async throws -> [Token] {
        try await unit.all(
            """
            SELECT \(unescaped: Token.columns) FROM tokens
            WHERE (\(operatorID)::uuid IS NULL OR operator_id = \(operatorID)) AND id > \(afterID) ORDER BY id LIMIT
                \(limit)
            """)
    }
}
