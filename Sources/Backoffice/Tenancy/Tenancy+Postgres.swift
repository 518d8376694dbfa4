import BackofficePlatform
import Foundation
import PostgresNIO

/// How tenants, operators and tokens are stored: columns and their decoding together.
extension Tenant: RowDecodable {
    package static let columns = "id, slug, name, created_at, version"

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, String, String, Date, Int64).self)
        self.init(id: c.0, slug: c.1, name: c.2, createdAt: c.3, version: c.4)
    }
}

extension Operator: RowDecodable {
    package static let columns = "id, tenant_id, email, role, kind, status, created_at, disabled_at, version"

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, String, String, String, String, Date, Date?, Int64).self)
        self.init(
            id: c.0, tenantID: c.1, email: c.2, role: try Role(known: c.3), kind: c.4, status: c.5, createdAt: c.6,
            disabledAt: c.7, version: c.8)
    }
}

extension Token: RowDecodable {
    package static let columns =
        """
        id, tenant_id, operator_id, name, role, created_at, expires_at, last_used_at, revoked_at, scopes,
        allowed_addresses::text[]
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, UUID, String, String, Date, Date, Date?, Date?, [String]?, [String]?).self)
        self.init(
            id: c.0, tenantID: c.1, operatorID: c.2, name: c.3, role: try Role(known: c.4), createdAt: c.5,
            expiresAt: c.6, lastUsedAt: c.7, revokedAt: c.8, scopes: c.9, allowedAddresses: c.10)
    }
}
