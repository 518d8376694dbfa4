import BackofficePlatform
import Foundation
import NIOCore
import PostgresNIO

/// A platform admin creates a partner tenant (`tenants.create`). The event opens the tenant's chain.
package struct CreateTenant: AuditedOperation {
    package static let action: Action = "tenants.create"
    let slug: String
    let name: String

    package init(slug: String, name: String) {
        self.slug = slug.trimmingCharacters(in: .whitespaces)
        self.name = name.trimmingCharacters(in: .whitespaces)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Tenant> {
        var validation = Validation()
        validation.require(
            Validation.isSlug(slug), "slug", "invalid_slug",
            "must be 2–63 lower-case letters, digits or dashes, starting with a letter or digit")
        validation.text(name, "name", max: 200)
        try validation.check()
        let query: PostgresQuery =
            """
            INSERT INTO tenants (id, slug, name, created_at) VALUES (\(unit.newID()), \(slug), \(name), \
            \(unit.now)) ON CONFLICT (slug) DO NOTHING RETURNING \(unescaped: Tenant.columns)
            """
        let tenant = try await unit.one(
            query, as: Tenant.self,
            else: DomainError.conflict(code: "slug_taken", detail: "A tenant with slug '\(slug)' already exists."))
        struct Snapshot: Encodable { let slug: String, name: String }
        return Audited(
            tenant,
            event: AuditRecord(
                action: Self.action, tenantID: tenant.id, targetType: "tenant", targetID: tenant.id.text, reason: nil,
                before: nil, after: try AuditRecord.json(Snapshot(slug: slug, name: name))))
    }
}

/// Creates an operator or service principal (`operators.create`). Platform roles live in the
/// platform tenant; partner roles need a tenant. A partner admin creates partner staff and
/// admins in its own tenant only. The email is stored normalised (`EmailAddress.normalised`).
///
/// Granting a platform role is what `policies/approvals.yaml` may hold for a second person's
/// approval; a partner's role is never held. The new person has no password either way: the
/// invitation (a secret) is sent once the operator exists, by whoever invites them.
package struct CreateOperator: ApprovalGated {
    package static let action: Action = "operators.create"
    let email: String
    let role: Role
    let tenantID: UUID?
    /// Why (recorded with the audit event, and with the approval request when held).
    let reason: String?

    package var approvalApplies: Bool { role.isPlatform }
    package var approvalAmount: Int64? { nil }
    package var approvalTarget: (type: String, id: String) { ("people", "platform") }
    package var approvalSummary: String { "Grant the platform role \(role.rawValue) to \(email)" }
    package var approvalReason: String? { reason }

    package init(email: String, role: Role, tenantID: UUID?, reason: String? = nil) {
        self.email = EmailAddress.normalised(email)
        self.role = role
        self.tenantID = tenantID
        let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.reason = reason?.isEmpty == false ? reason : nil
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Operator> {
        var validation = Validation()
        validation.email(email, "email")
        validation.text(reason, "reason", max: 1000, required: false)
        let principal = unit.principal
        let tenant: UUID
        if principal.tenantID != platformTenantID {
            validation.require(!role.isPlatform, "role", "not_allowed", "a partner may create only partner roles")
            validation.require(
                tenantID == nil || tenantID == principal.tenantID, "tenant_id", "not_allowed", "must be your own tenant"
            )
            tenant = principal.tenantID
        } else if role.isPlatform {
            validation.require(
                tenantID == nil || tenantID == platformTenantID, "tenant_id", "not_allowed",
                "platform roles belong to the platform")
            tenant = platformTenantID
        } else {
            validation.require(
                tenantID != nil && tenantID != platformTenantID, "tenant_id", "required",
                "is required for partner roles")
            tenant = tenantID ?? platformTenantID
        }
        try validation.check()
        let exists = try await unit.first("SELECT 1 FROM tenants WHERE id = \(tenant)") { _ in true }
        guard exists == true else { throw DomainError.notFound("Tenant \(tenant.text)") }
        let query: PostgresQuery = """
            INSERT INTO operators (tenant_id, id, email, role, kind, created_at)
            VALUES (\(tenant), \(unit.newID()), \(email), \(role.rawValue), \(role.kind), \(unit.now))
            ON CONFLICT DO NOTHING RETURNING \(unescaped: Operator.columns)
            """
        let created = try await unit.one(
            query, as: Operator.self,
            else: DomainError.conflict(
                code: "email_taken", detail: "An operator with this email already exists in the tenant."))
        return Audited(
            created,
            event: AuditRecord(
                action: Self.action, tenantID: tenant, targetType: "operator", targetID: created.id.text,
                reason: reason, before: nil, after: try created.snapshot))
    }
}

/// Disables an operator (`operators.disable`); its tokens are refused from the next request on.
/// Nobody can lock a tenant out: an operator cannot disable itself (409 `cannot_disable_self`),
/// and a tenant's last active admin (`partner_admin`, or the platform's last `platform_admin`)
/// cannot be disabled (409 `last_admin`).
package struct DisableOperator: AuditedOperation {
    package static let action: Action = "operators.disable"
    let operatorID: UUID
    let reason: String?
    let ifMatch: String?

    package func perform(in unit: UnitOfWork) async throws -> Audited<Operator> {
        let reason = try requireReason(reason)
        let before = try await unit.one(
            "SELECT \(unescaped: Operator.columns) FROM operators WHERE id = \(operatorID) FOR UPDATE",
            as: Operator.self,
            else: DomainError.notFound("Operator \(operatorID.text)"))
        try EntityTag.check(ifMatch, version: before.version)
        guard before.status == "active" else {
            throw DomainError.invalidTransition("The operator is already disabled.", current: before.status)
        }
        guard before.id != unit.principal.operatorID else {
            throw DomainError.conflict(
                code: "cannot_disable_self", detail: "An operator cannot disable itself; ask another admin.")
        }
        if before.role == .partnerAdmin || before.role == .platformAdmin {
            // Lock the tenant's admins in a fixed order so two concurrent disables cannot both pass.
            let others =
                try await unit.first(
                    """
                    WITH admins AS (
                        SELECT id FROM operators WHERE tenant_id = \(before.tenantID) AND role =
                            \(before.role.rawValue) AND status = 'active'
                        ORDER BY id FOR UPDATE
                    ) SELECT count(*) FROM admins WHERE id <> \(operatorID)
                    """
                ) { try $0.decode(Int.self) } ?? 0
            guard others > 0 else {
                throw DomainError.conflict(
                    code: "last_admin",
                    detail:
                        """
                        This is the last active \(before.role.rawValue) of its tenant; create another before \
                        disabling it.
                        """
                )
            }
        }
        let after = try await unit.one(
            """
            UPDATE operators SET status = 'disabled', disabled_at = \(unit.now), version = version + 1
            WHERE id = \(operatorID) RETURNING \(unescaped: Operator.columns)
            """, as: Operator.self, else: DomainError.notFound("Operator \(operatorID.text)"))
        return Audited(
            after,
            event: AuditRecord(
                action: Self.action, tenantID: before.tenantID, targetType: "operator", targetID: operatorID.text,
                reason: reason, before: try before.snapshot, after: try after.snapshot))
    }
}

/// Issues a token for an operator (`tokens.create`): the secret is returned once and stored as SHA-256.
/// A partner admin issues tokens for itself and its staff, never for another admin (403).
/// `scopes` narrows it to some of the operator's role's scopes (nil: all of them);
/// `allowedAddresses` binds it to source networks (nil: any).
package struct CreateToken: AuditedOperation {
    package static let action: Action = "tokens.create"
    let operatorID: UUID
    let name: String
    let expiresInHours: Int?
    let scopes: [String]?
    let allowedAddresses: [String]?

    package init(
        operatorID: UUID, name: String?, expiresInHours: Int?, scopes: [String]? = nil,
        allowedAddresses: [String]? = nil
    ) {
        self.operatorID = operatorID
        self.name =
            (name ?? "").trimmingCharacters(in: .whitespaces).isEmpty
            ? "token" : (name ?? "").trimmingCharacters(in: .whitespaces)
        self.expiresInHours = expiresInHours
        self.scopes = scopes.map { Array(Set($0)).sorted() }
        self.allowedAddresses = allowedAddresses
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<
        (Token, TokenSecret)
    > {
        let security = unit.policies.security
        let hours = expiresInHours ?? security.defaultTokenLifetimeHours
        var validation = Validation()
        validation.require(
            hours >= 1 && hours <= security.maxTokenLifetimeHours, "expires_in_hours", "out_of_range",
            "must be between 1 and \(security.maxTokenLifetimeHours) (policies/security.yaml)")
        validation.text(name, "name", max: 100)
        try validation.check()
        let owner = try await unit.one(
            "SELECT \(unescaped: Operator.columns) FROM operators WHERE id = \(operatorID)", as: Operator.self,
            else: DomainError.notFound("Operator \(operatorID.text)"))
        guard owner.status == "active" else {
            throw DomainError.invalidTransition("The operator is disabled.", current: owner.status)
        }
        let client = try await unit.first("SELECT 1 FROM oauth_clients WHERE operator_id = \(operatorID)") { _ in true }
        guard client == nil else {
            throw DomainError.forbiddenTarget(
                Self.action, detail: "An OAuth client's operator takes no API token: the client gets access tokens.")
        }
        let limits = try TokenLimits(scopes: scopes, allowedAddresses: allowedAddresses).bounded(
            by: unit.principal, role: owner.role, in: unit.policies.access)
        try limits.check(for: owner.role, in: unit.policies.access)
        if owner.role == .partnerAdmin, unit.principal.role == Role.partnerAdmin.rawValue,
            owner.id != unit.principal.operatorID
        {
            throw DomainError.forbiddenTarget(
                Self.action, detail: "A partner admin mints tokens for itself and its staff, not for another admin.")
        }
        let secret = TokenSecret.generate()
        let query: PostgresQuery = """
            INSERT INTO tokens (tenant_id, id, operator_id, name, secret_hash, role, expires_at, created_at, scopes,
                allowed_addresses)
            VALUES (\(owner.tenantID), \(unit.newID()), \(owner.id), \(name), \(ByteBuffer(bytes: secret.hash)),
                \(owner.role.rawValue), \(unit.now.addingTimeInterval(Double(hours) * 3600)), \(unit.now),
                \(limits.scopes), \(limits.networks)::cidr[])
            RETURNING \(unescaped: Token.columns)
            """
        let token = try await unit.one(
            query, as: Token.self, else: DomainError.inconsistent("the new token was not returned"))
        return Audited(
            (token, secret),
            event: AuditRecord(
                action: Self.action, tenantID: owner.tenantID, targetType: "token", targetID: token.id.text,
                reason: nil,
                before: nil, after: try token.snapshot))
    }
}

/// Revokes a token (`tokens.revoke`): refused from the next request on. Revoking twice is 409.
package struct RevokeToken: AuditedOperation {
    package static let action: Action = "tokens.revoke"
    let tokenID: UUID

    package init(tokenID: UUID) { self.tokenID = tokenID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Token> {
        try await Token.revoke(tokenID, as: Self.action, in: unit)
    }
}
