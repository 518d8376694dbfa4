import BackofficePlatform
import Foundation
import NIOCore
import PostgresNIO

/// A token a client holds in hand and sends to revoke or introspect it, with the client's own
/// credentials. Only the token's hash is ever compared.
package struct HeldToken: Sendable {
    let text: String
    let credentials: ClientCredentials?
    /// The service's issuer (an assertion's audience).
    let issuer: String

    package init(_ text: String, credentials: ClientCredentials?, issuer: String) {
        (self.text, self.credentials, self.issuer) = (text, credentials, issuer)
    }

    var hash: ByteBuffer { ByteBuffer(bytes: TokenSecret(value: text).hash) }
}

/// Revokes one of the authenticated client's own access tokens (`oauth.revoke`, RFC 7009): any
/// other text, or a token already gone, changes nothing and is answered alike (200), so the
/// endpoint tells nobody which tokens exist. A revocation is audited.
package struct RevokeAccessToken: AuditedOperation {
    package static let action: Action = "oauth.revoke"
    let held: HeldToken

    package init(_ held: HeldToken) { self.held = held }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Bool> {
        let client = try await ClientCredentials.authenticate(held.credentials, issuer: held.issuer, in: unit)
        guard
            let revoked = try await unit.first(
                """
                UPDATE tokens SET revoked_at = \(unit.now)
                WHERE secret_hash = \(held.hash) AND client_id = \(client.id)
                    AND revoked_at IS NULL
                RETURNING id
                """, { try $0.decode(UUID.self) })
        else { return .unchanged(false) }
        return Audited(
            true,
            event: AuditRecord(
                action: Self.action, tenantID: client.tenantID, targetType: "token", targetID: revoked.text,
                reason: nil, before: nil, after: try AuditRecord.json(["client_id": client.id.text])))
    }
}

/// What a token is, for a client that holds it in hand (`oauth.introspect`, RFC 7662): an access
/// token or an API token of the client's tenant (any tenant's for a platform client) that is
/// live is `active` with its scopes, owner and times; anything else is only `active: false`.
package struct IntrospectToken: AuditedOperation {
    package static let action: Action = "oauth.introspect"
    let held: HeldToken

    package init(_ held: HeldToken) { self.held = held }

    /// A live token's facts.
    package struct Facts: Sendable {
        package let tokenID: UUID
        package let operatorID: UUID
        package let clientID: UUID?
        package let role: Role
        package let scopes: [String]
        package let issuedAt: Date
        package let expiresAt: Date
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Facts?> {
        let client = try await ClientCredentials.authenticate(held.credentials, issuer: held.issuer, in: unit)
        let tenant: UUID? = client.tenantID == platformTenantID ? nil : client.tenantID
        let facts = try await unit.first(
            """
            SELECT t.id, t.operator_id, t.client_id, t.role, coalesce(t.scopes, '{}'), t.created_at, t.expires_at
            FROM tokens t JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id
            WHERE t.secret_hash = \(held.hash) AND t.revoked_at IS NULL
                AND t.expires_at > \(unit.now) AND o.status = 'active'
                AND (\(tenant)::uuid IS NULL OR t.tenant_id = \(tenant))
            """,
            { row -> Facts in
                let c = try row.decode((UUID, UUID, UUID?, String, [String], Date, Date).self)
                return Facts(
                    tokenID: c.0, operatorID: c.1, clientID: c.2, role: try Role(known: c.3),
                    scopes: c.4.isEmpty ? unit.policies.access.scopes(of: try Role(known: c.3)) : c.4,
                    issuedAt: c.5, expiresAt: c.6)
            })
        return .unchanged(facts)
    }
}

/// Rotates the access tokens' signing key (`oauth_keys.rotate`): the current generation is
/// retired and the next made current, under the table's lock (two rotations at once make two
/// generations, one after the other). Audited with both generations.
package struct RotateSigningKey: AuditedOperation {
    package static let action: Action = "oauth_keys.rotate"

    package init() {}

    package func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        try await unit.execute("LOCK TABLE oauth_signing_keys IN SHARE ROW EXCLUSIVE MODE")
        guard
            let retired = try await unit.first(
                """
                UPDATE oauth_signing_keys SET retired_at = \(unit.now) WHERE retired_at IS NULL RETURNING generation
                """, { Int(try $0.decode(Int32.self)) })
        else { throw DomainError.inconsistent("no current signing key generation") }
        try await unit.execute(
            "INSERT INTO oauth_signing_keys (generation, created_at) VALUES (\(Int32(retired + 1)), \(unit.now))")
        return Audited(
            retired + 1,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "oauth_signing_key",
                targetID: "g\(retired + 1)", reason: nil, before: try AuditRecord.json(["current": "g\(retired)"]),
                after: try AuditRecord.json(["current": "g\(retired + 1)"])))
    }
}
