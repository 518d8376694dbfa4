import BackofficePlatform
import Foundation
import NIOCore
import PostgresNIO

/// A machine client (OAuth 2.0 client credentials): it acts as a service operator of its own, with
/// the scopes it was registered with, from the networks it was bound to. Never its secret; its
/// public keys when it authenticates with signed assertions (`private_key_jwt`).
package struct OAuthClient: Sendable, Equatable, Identifiable {
    package var id: UUID
    package var tenantID: UUID
    package var operatorID: UUID
    package var name: String
    package var role: Role
    package var scopes: [String]
    package var allowedAddresses: [String]?
    package var createdAt: Date
    package var revokedAt: Date?
    /// Its Ed25519 public keys (each a JWK's `x`, base64url) when it authenticates with signed
    /// assertions (`private_key_jwt`); nil for a client with a secret.
    package var publicKeys: [String]? = nil
    /// The person it was registered for (the requester when it was held); nil when the system made it.
    package var ownerID: UUID? = nil

    /// Whether `scopes` hold a write scope: any scope not named `…:read`.
    static func writes(_ scopes: [String]) -> Bool { scopes.contains { !$0.hasSuffix(":read") } }

    /// How it authenticates at the token endpoint (RFC 7591's `token_endpoint_auth_method`).
    package var authMethod: String { publicKeys == nil ? "client_secret_basic" : "private_key_jwt" }

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let name: String, role: String, operator_id: String, scopes: [String], allowed_addresses: [String]?
                let revoked: Bool, public_keys: [String]?
            }
            return try AuditRecord.json(
                Snapshot(
                    name: name, role: role.rawValue, operator_id: operatorID.text, scopes: scopes,
                    allowed_addresses: allowedAddresses, revoked: revokedAt != nil, public_keys: publicKeys))
        }
    }
}

extension OAuthClient: RowDecodable, ListedByID {
    package static let columns =
        "id, tenant_id, operator_id, name, role, scopes, allowed_addresses::text[], created_at, revoked_at, "
        + "public_keys, owner_id"
    package static let table = "oauth_clients"
    package static let ownerColumn = "tenant_id"
    package static let listAction: Action = "oauth_clients.list"

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (UUID, UUID, UUID, String, String, [String], [String]?, Date, Date?, [String]?, UUID?).self)
        self.init(
            id: c.0, tenantID: c.1, operatorID: c.2, name: c.3, role: try Role(known: c.4), scopes: c.5,
            allowedAddresses: c.6, createdAt: c.7, revokedAt: c.8, publicKeys: c.9, ownerID: c.10)
    }
}

/// A client's secret: `oc_` + 32 random bytes in base64url, shown once, stored as SHA-256.
enum OAuthClientSecret {
    static func generate() -> TokenSecret { TokenSecret(value: "oc_" + TokenSecret.generate().value.dropFirst(3)) }
}

/// Registers a machine client (`oauth_clients.create`): a service operator of `role` is made for
/// it in the tenant, and the client with `scopes` (each a scope of the role) and networks; the
/// secret is returned once. No client acts as a platform admin. A partner admin registers its
/// own shop's clients (partner roles), a platform admin the platform's or a named shop's.
///
/// A client with a write scope (any scope not named `…:read`) is what `policies/approvals.yaml` may
/// hold for a second person's approval. Approved, it is registered with a secret nobody is shown
/// (the approval's answer carries none): its owner, the requester, then issues its first one
/// (`IssueOAuthClientSecret`, which only the owner may do for a client with a write scope).
package struct RegisterOAuthClient: ApprovalGated {
    package static let action: Action = "oauth_clients.create"
    let name: String
    let role: Role
    let tenantID: UUID?
    let scopes: [String]
    let allowedAddresses: [String]?
    /// Why (recorded with the audit event, and with the approval request when held).
    let reason: String?
    /// The new client's id when it was chosen before (a held registration names it); else a new one.
    var clientID: UUID?
    /// Its Ed25519 public keys (each a JWK's `x`, base64url) when it authenticates with signed
    /// assertions (`private_key_jwt`): it then has no secret.
    var publicKeys: [String]?
    /// Who it is registered for (the requester of a held registration); else who registers it.
    var ownerID: UUID?

    package init(
        name: String, role: Role, tenantID: UUID?, scopes: [String], allowedAddresses: [String]?, reason: String? = nil,
        publicKeys: [String]? = nil
    ) {
        self.publicKeys = publicKeys
        self.name = name.trimmingCharacters(in: .whitespaces)
        (self.role, self.tenantID) = (role, tenantID)
        self.scopes = Array(Set(scopes)).sorted()
        self.allowedAddresses = allowedAddresses
        let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.reason = reason?.isEmpty == false ? reason : nil
    }

    package var approvalApplies: Bool { OAuthClient.writes(scopes) }
    package var approvalAmount: Int64? { nil }
    package var approvalTarget: (type: String, id: String) { ("oauth_client", clientID?.text ?? "") }
    package var approvalSummary: String {
        "Register the OAuth client \u{201C}\(name)\u{201D} as \(role.rawValue) with \(scopes.joined(separator: ", "))"
    }
    package var approvalReason: String? { reason }

    /// What the requester asked for made explicit, so that whoever approves registers the same: the
    /// tenant (the requester's when none was named), the scopes and networks as the requester's own
    /// credential bounds them, the requester as its owner; the client's id chosen, so the request
    /// names it.
    /// - Throws: `invalid` (`beyond_credential`) for a scope or network beyond the requester's.
    package func resolved(in unit: UnitOfWork) throws -> RegisterOAuthClient {
        let limits = try TokenLimits(scopes: scopes, allowedAddresses: allowedAddresses).bounded(
            by: unit.principal, role: role, in: unit.policies.access)
        var held = RegisterOAuthClient(
            name: name, role: role, tenantID: tenantID ?? unit.principal.tenantID, scopes: limits.scopes ?? scopes,
            allowedAddresses: limits.allowedAddresses, reason: reason, publicKeys: publicKeys)
        (held.clientID, held.ownerID) = (clientID ?? unit.newID(), ownerID ?? unit.principal.operatorID)
        return held
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(OAuthClient, TokenSecret?)> {
        var validation = Validation()
        validation.text(name, "name", max: 100)
        let keys = publicKeys.map { ClientPublicKey.validated($0, &validation) }
        validation.text(reason, "reason", max: 1000, required: false)
        validation.require(
            role != .platformAdmin, "role", "not_allowed", "no client acts as a platform admin: choose a narrower role")
        try validation.check()
        let limits = try TokenLimits(scopes: scopes, allowedAddresses: allowedAddresses).bounded(
            by: unit.principal, role: role, in: unit.policies.access)
        try limits.check(for: role, in: unit.policies.access)
        let id = clientID ?? unit.newID()
        let made = try await CreateOperator(
            email: "client-\(id.text)@oauth-clients.invalid", role: role, tenantID: tenantID
        ).perform(in: unit)
        let service = made.output
        try await unit.execute("UPDATE operators SET kind = 'service' WHERE id = \(service.id)")
        let secret = keys == nil ? OAuthClientSecret.generate() : nil
        let client = try await unit.one(
            """
            INSERT INTO oauth_clients (tenant_id, id, operator_id, name, role, secret_hash, scopes, allowed_addresses,
                created_at, public_keys, owner_id)
            VALUES (\(service.tenantID), \(id), \(service.id), \(name), \(role.rawValue),
                \(secret.map { ByteBuffer(bytes: $0.hash) }), \(limits.scopes ?? scopes),
                \(limits.networks)::cidr[],
                \(unit.now), \(keys), \(ownerID ?? unit.principal.operatorID))
            RETURNING \(unescaped: OAuthClient.columns)
            """, as: OAuthClient.self, else: DomainError.inconsistent("the new client was not returned"))
        return Audited(
            (client, secret),
            event: AuditRecord(
                action: Self.action, tenantID: client.tenantID, targetType: "oauth_client", targetID: client.id.text,
                reason: reason, before: nil, after: try client.snapshot),
            more: made.events)
    }
}

/// Revokes a client (`oauth_clients.revoke`) and every live access token issued to it; its
/// service operator is disabled, so nothing it holds authenticates again. Twice is 409.
package struct RevokeOAuthClient: AuditedOperation {
    package static let action: Action = "oauth_clients.revoke"
    let clientID: UUID

    package init(clientID: UUID) { self.clientID = clientID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<OAuthClient> {
        let revoked = try await OAuthClient.revoke(clientID, as: Self.action, in: unit)
        try await unit.execute(
            "UPDATE tokens SET revoked_at = \(unit.now) WHERE client_id = \(clientID) AND revoked_at IS NULL")
        try await unit.execute(
            """
            UPDATE operators SET status = 'disabled', disabled_at = \(unit.now) WHERE id = \(revoked.output.operatorID)
            """)
        return revoked
    }
}

/// Issues a client a new secret (`oauth_clients.secret`), returned once and stored as SHA-256: the
/// one it had stops working at once (access tokens already issued live out their 15 minutes). A
/// registration approved by a second person gets its first usable secret this way.
///
/// A client with a write scope gives its secret only to its owner, the person it was registered
/// for (403 `not_the_owner`): so no one takes alone a write credential a second person did not
/// approve for them. Nobody's credential issues a client broader than itself (422
/// `beyond_credential`). A revoked client is 409; another tenant's is 404.
package struct IssueOAuthClientSecret: AuditedOperation {
    package static let action: Action = "oauth_clients.secret"
    let clientID: UUID

    package init(clientID: UUID) { self.clientID = clientID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(OAuthClient, TokenSecret)> {
        let client = try await unit.one(
            "SELECT \(unescaped: OAuthClient.columns) FROM oauth_clients WHERE id = \(clientID) FOR UPDATE",
            as: OAuthClient.self, else: DomainError.notFound("The OAuth client \(clientID.text)"))
        guard client.revokedAt == nil else {
            throw DomainError.invalidTransition("The OAuth client is revoked.", current: "revoked")
        }
        guard client.publicKeys == nil else {
            throw DomainError.conflict(
                code: "private_key_jwt_client",
                detail: "This client authenticates with its own key (private_key_jwt): it has no secret.")
        }
        let owner = client.ownerID
        guard !OAuthClient.writes(client.scopes) || (owner != nil && owner == unit.principal.operatorID) else {
            throw DomainError.forbiddenTarget(
                Self.action, code: "not_the_owner",
                detail: "A client with a write scope gives its secret only to the person it was registered for.")
        }
        _ = try TokenLimits(scopes: client.scopes, allowedAddresses: client.allowedAddresses).bounded(
            by: unit.principal, role: client.role, in: unit.policies.access)
        let secret = OAuthClientSecret.generate()
        try await unit.execute(
            "UPDATE oauth_clients SET secret_hash = \(ByteBuffer(bytes: secret.hash)) WHERE id = \(clientID)")
        struct Issued: Encodable { let secretIssuedAt: Date }
        return Audited(
            (client, secret),
            event: AuditRecord(
                action: Self.action, tenantID: client.tenantID, targetType: "oauth_client", targetID: client.id.text,
                reason: "a new secret; the previous one no longer works", before: nil,
                after: try AuditRecord.json(Issued(secretIssuedAt: unit.now))))
    }
}
