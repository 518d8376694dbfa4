import Foundation

/// A partner tenant (a retail partner's shop).
public struct Tenant: Sendable, Equatable {
    public var id: UUID
    public var slug: String
    public var name: String
    public var createdAt: Date
    public var version: Int64

}

/// A principal that holds tokens: a person (operator) or a service (the app's backend).
public struct Operator: Sendable, Equatable {
    public var id: UUID
    public var tenantID: UUID
    public var email: String
    public var role: Role
    public var kind: String
    public var status: String
    public var createdAt: Date
    public var disabledAt: Date?
    public var version: Int64

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let email: String, role: String, status: String, version: Int64 }
            return try AuditRecord.json(Snapshot(email: email, role: role.rawValue, status: status, version: version))
        }
    }
}

/// An API token's stored metadata (never its secret).
public struct Token: Sendable, Equatable {
    public var id: UUID
    public var tenantID: UUID
    public var operatorID: UUID
    public var name: String
    public var role: Role
    public var createdAt: Date
    public var expiresAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let operator_id: String, name: String, role: String, expires_at: Date, revoked: Bool }
            return try AuditRecord.json(
                Snapshot(operator_id: operatorID.text, name: name, role: role.rawValue, expires_at: expiresAt, revoked: revokedAt != nil))
        }
    }
}

/// Who a request authenticated as: the operator and the token (`GET /v1/me`).
public struct Session: Sendable, Equatable {
    public var operatorID: UUID
    public var email: String
    public var role: Role
    public var tenantID: UUID
    public var tokenID: UUID
    public var tokenName: String
    public var expiresAt: Date
}
