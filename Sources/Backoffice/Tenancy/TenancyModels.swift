import BackofficePlatform
import Foundation

/// A partner tenant (a retail partner's shop).
package struct Tenant: Sendable, Equatable {
    package var id: UUID
    package var slug: String
    package var name: String
    package var createdAt: Date
    package var version: Int64

}

/// A principal that holds tokens: a person (operator) or a service (the app's backend).
package struct Operator: Sendable, Equatable, Identifiable {
    package var id: UUID
    package var tenantID: UUID
    package var email: String
    package var role: Role
    package var kind: String
    package var status: String
    package var createdAt: Date
    package var disabledAt: Date?
    package var version: Int64

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let email: String, role: String, status: String, version: Int64 }
            return try AuditRecord.json(Snapshot(email: email, role: role.rawValue, status: status, version: version))
        }
    }
}

/// An API token's stored metadata (never its secret).
package struct Token: Sendable, Equatable, Identifiable {
    package var id: UUID
    package var tenantID: UUID
    package var operatorID: UUID
    package var name: String
    package var role: Role
    package var createdAt: Date
    package var expiresAt: Date
    package var lastUsedAt: Date?
    package var revokedAt: Date?
    /// The scopes it was narrowed to; nil: every scope of its role.
    package var scopes: [String]? = nil
    /// The source networks it is accepted from (CIDR); nil: any.
    package var allowedAddresses: [String]? = nil

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let operator_id: String, name: String, role: String, expires_at: Date, revoked: Bool
                let scopes: [String]?, allowed_addresses: [String]?
            }
            return try AuditRecord.json(
                Snapshot(
                    operator_id: operatorID.text, name: name, role: role.rawValue, expires_at: expiresAt,
                    revoked: revokedAt != nil, scopes: scopes, allowed_addresses: allowedAddresses))
        }
    }
}

/// Who a request authenticated as: the operator and the token (`GET /v1/me`).
package struct Session: Sendable, Equatable {
    package var operatorID: UUID
    package var email: String
    package var role: Role
    package var tenantID: UUID
    package var tokenID: UUID
    package var tokenName: String
    package var expiresAt: Date
}
