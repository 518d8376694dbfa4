import Foundation
import Logging
import NIOCore
import PostgresNIO

/// A partner tenant (a retail partner's shop).
public struct Tenant: Sendable, Equatable {
    public var id: UUID
    public var slug: String
    public var name: String
    public var createdAt: Date
    public var version: Int64

    static let columns = "id, slug, name, created_at, version"
    static func decode(_ row: PostgresRow) throws -> Tenant {
        let c = try row.decode((UUID, String, String, Date, Int64).self)
        return Tenant(id: c.0, slug: c.1, name: c.2, createdAt: c.3, version: c.4)
    }
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

    static let columns = "id, tenant_id, email, role, kind, status, created_at, disabled_at, version"
    static func decode(_ row: PostgresRow) throws -> Operator {
        let c = try row.decode((UUID, UUID, String, String, String, String, Date, Date?, Int64).self)
        return Operator(
            id: c.0, tenantID: c.1, email: c.2, role: try Role(known: c.3), kind: c.4, status: c.5, createdAt: c.6,
            disabledAt: c.7, version: c.8)
    }

    var snapshot: String {
        struct Snapshot: Encodable { let email: String, role: String, status: String, version: Int64 }
        return AuditRecord.json(Snapshot(email: email, role: role.rawValue, status: status, version: version))
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

    static let columns = "id, tenant_id, operator_id, name, role, created_at, expires_at, last_used_at, revoked_at"
    static func decode(_ row: PostgresRow) throws -> Token {
        let c = try row.decode((UUID, UUID, UUID, String, String, Date, Date, Date?, Date?).self)
        return Token(
            id: c.0, tenantID: c.1, operatorID: c.2, name: c.3, role: try Role(known: c.4), createdAt: c.5, expiresAt: c.6,
            lastUsedAt: c.7, revokedAt: c.8)
    }

    var snapshot: String {
        struct Snapshot: Encodable { let operator_id: String, name: String, role: String, expires_at: Date, revoked: Bool }
        return AuditRecord.json(
            Snapshot(operator_id: operatorID.text, name: name, role: role.rawValue, expires_at: expiresAt, revoked: revokedAt != nil))
    }
}

func firstRow<T>(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger, _ decode: (PostgresRow) throws -> T) async throws -> T? {
    for try await row in try await connection.query(query, logger: logger) { return try decode(row) }
    return nil
}

/// A platform admin creates a partner tenant (`tenants.create`). The event opens the tenant's chain.
public struct CreateTenant: AuditedOperation {
    public static let action = Action.tenantsCreate
    let slug: String
    let name: String

    public init(slug: String, name: String) {
        self.slug = slug.trimmingCharacters(in: .whitespaces)
        self.name = name.trimmingCharacters(in: .whitespaces)
    }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Tenant> {
        var validation = Validation()
        validation.require(
            slug.range(of: "^[a-z0-9][a-z0-9-]{1,62}$", options: .regularExpression) != nil, "slug", "invalid_slug",
            "must be 2–63 lower-case letters, digits or dashes, starting with a letter or digit")
        validation.text(name, "name", max: 200)
        try validation.check()
        let query: PostgresQuery =
            "INSERT INTO tenants (id, slug, name) VALUES (\(UUID()), \(slug), \(name)) ON CONFLICT (slug) DO NOTHING RETURNING \(unescaped: Tenant.columns)"
        guard let tenant = try await firstRow(query, on: connection, logger: database.logger, Tenant.decode) else {
            throw Problem.conflict("slug_taken", "A tenant with slug '\(slug)' already exists.")
        }
        struct Snapshot: Encodable { let slug: String, name: String }
        return Audited(
            tenant,
            event: AuditRecord(
                action: Self.action, tenantID: tenant.id, targetType: "tenant", targetID: tenant.id.uuidString.lowercased(), reason: nil,
                before: nil, after: AuditRecord.json(Snapshot(slug: slug, name: name))))
    }
}

/// Creates an operator or service principal (`operators.create`). Platform roles live in the
/// platform tenant; partner roles need a tenant. A partner admin creates partner staff and
/// admins in its own tenant only.
public struct CreateOperator: AuditedOperation {
    public static let action = Action.operatorsCreate
    let email: String
    let role: Role
    let tenantID: UUID?

    public init(email: String, role: Role, tenantID: UUID?) {
        self.email = email.trimmingCharacters(in: .whitespaces)
        self.role = role
        self.tenantID = tenantID
    }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Operator> {
        var validation = Validation()
        validation.email(email, "email")
        let principal = context.principal
        let tenant: UUID
        if principal.tenantID != platformTenantID {
            validation.require(!role.isPlatform, "role", "not_allowed", "a partner may create only partner roles")
            validation.require(tenantID == nil || tenantID == principal.tenantID, "tenant_id", "not_allowed", "must be your own tenant")
            tenant = principal.tenantID
        } else if role.isPlatform {
            validation.require(tenantID == nil || tenantID == platformTenantID, "tenant_id", "not_allowed", "platform roles belong to the platform")
            tenant = platformTenantID
        } else {
            validation.require(tenantID != nil && tenantID != platformTenantID, "tenant_id", "required", "is required for partner roles")
            tenant = tenantID ?? platformTenantID
        }
        try validation.check()
        let exists = try await firstRow("SELECT 1 FROM tenants WHERE id = \(tenant)", on: connection, logger: database.logger) { _ in true }
        guard exists == true else { throw Problem.notFound("Tenant \(tenant.uuidString.lowercased())") }
        let query: PostgresQuery = """
            INSERT INTO operators (tenant_id, id, email, role, kind) VALUES (\(tenant), \(UUID()), \(email), \(role.rawValue), \(role.kind))
            ON CONFLICT DO NOTHING RETURNING \(unescaped: Operator.columns)
            """
        guard let created = try await firstRow(query, on: connection, logger: database.logger, Operator.decode) else {
            throw Problem.conflict("email_taken", "An operator with this email already exists in the tenant.")
        }
        return Audited(
            created,
            event: AuditRecord(
                action: Self.action, tenantID: tenant, targetType: "operator", targetID: created.id.uuidString.lowercased(), reason: nil,
                before: nil, after: created.snapshot))
    }
}

/// Disables an operator (`operators.disable`); its tokens are refused from the next request on.
/// Nobody can lock a tenant out: an operator cannot disable itself (409 `cannot_disable_self`),
/// and a tenant's last active admin (`partner_admin`, or the platform's last `platform_admin`)
/// cannot be disabled (409 `last_admin`).
public struct DisableOperator: AuditedOperation {
    public static let action = Action.operatorsDisable
    let operatorID: UUID
    let reason: String?
    let ifMatch: String?

    public init(operatorID: UUID, reason: String?, ifMatch: String?) {
        self.operatorID = operatorID
        self.reason = reason
        self.ifMatch = ifMatch
    }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Operator> {
        let reason = try requireReason(reason)
        guard
            let before = try await firstRow(
                "SELECT \(unescaped: Operator.columns) FROM operators WHERE id = \(operatorID) FOR UPDATE", on: connection, logger: database.logger,
                Operator.decode)
        else { throw Problem.notFound("Operator \(operatorID.uuidString.lowercased())") }
        try EntityTag.check(ifMatch, version: before.version)
        guard before.status == "active" else { throw Problem.invalidTransition("The operator is already disabled.", current: before.status) }
        guard before.id != context.principal.operatorID else {
            throw Problem.conflict("cannot_disable_self", "An operator cannot disable itself; ask another admin.")
        }
        if before.role == .partnerAdmin || before.role == .platformAdmin {
            // Lock the tenant's admins in a fixed order so two concurrent disables cannot both pass.
            let others =
                try await firstRow(
                    """
                    WITH admins AS (
                        SELECT id FROM operators WHERE tenant_id = \(before.tenantID) AND role = \(before.role.rawValue) AND status = 'active'
                        ORDER BY id FOR UPDATE
                    ) SELECT count(*) FROM admins WHERE id <> \(operatorID)
                    """, on: connection, logger: database.logger
                ) { try $0.decode(Int.self) } ?? 0
            guard others > 0 else {
                throw Problem.conflict(
                    "last_admin", "This is the last active \(before.role.rawValue) of its tenant; create another before disabling it.")
            }
        }
        guard
            let after = try await firstRow(
                """
                UPDATE operators SET status = 'disabled', disabled_at = now(), version = version + 1
                WHERE id = \(operatorID) RETURNING \(unescaped: Operator.columns)
                """, on: connection, logger: database.logger, Operator.decode)
        else { throw Problem.notFound("Operator \(operatorID.uuidString.lowercased())") }
        return Audited(
            after,
            event: AuditRecord(
                action: Self.action, tenantID: before.tenantID, targetType: "operator", targetID: operatorID.uuidString.lowercased(),
                reason: reason, before: before.snapshot, after: after.snapshot))
    }
}

/// Issues a token for an operator (`tokens.create`): the secret is returned once and stored as SHA-256.
public struct CreateToken: AuditedOperation {
    public static let action = Action.tokensCreate
    let operatorID: UUID
    let name: String
    let expiresInHours: Int?

    public init(operatorID: UUID, name: String?, expiresInHours: Int?) {
        self.operatorID = operatorID
        self.name = (name ?? "").trimmingCharacters(in: .whitespaces).isEmpty ? "token" : (name ?? "").trimmingCharacters(in: .whitespaces)
        self.expiresInHours = expiresInHours
    }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<
        (Token, TokenSecret)
    > {
        let security = context.policies.security
        let hours = expiresInHours ?? security.defaultTokenLifetimeHours
        var validation = Validation()
        validation.require(
            hours >= 1 && hours <= security.maxTokenLifetimeHours, "expires_in_hours", "out_of_range",
            "must be between 1 and \(security.maxTokenLifetimeHours) (policies/security.yaml)")
        validation.text(name, "name", max: 100)
        try validation.check()
        guard
            let owner = try await firstRow(
                "SELECT \(unescaped: Operator.columns) FROM operators WHERE id = \(operatorID)", on: connection, logger: database.logger,
                Operator.decode)
        else { throw Problem.notFound("Operator \(operatorID.uuidString.lowercased())") }
        guard owner.status == "active" else { throw Problem.invalidTransition("The operator is disabled.", current: owner.status) }
        let secret = TokenSecret.generate()
        let query: PostgresQuery = """
            INSERT INTO tokens (tenant_id, id, operator_id, name, secret_hash, role, expires_at)
            VALUES (\(owner.tenantID), \(UUID()), \(owner.id), \(name), \(ByteBuffer(bytes: secret.hash)), \(owner.role.rawValue), now() + make_interval(hours => \(hours)::int))
            RETURNING \(unescaped: Token.columns)
            """
        guard let token = try await firstRow(query, on: connection, logger: database.logger, Token.decode) else { throw Problem.internalError }
        return Audited(
            (token, secret),
            event: AuditRecord(
                action: Self.action, tenantID: owner.tenantID, targetType: "token", targetID: token.id.uuidString.lowercased(), reason: nil,
                before: nil, after: token.snapshot))
    }
}

/// Revokes a token (`tokens.revoke`): refused from the next request on. Revoking twice is 409.
public struct RevokeToken: AuditedOperation {
    public static let action = Action.tokensRevoke
    let tokenID: UUID

    public init(tokenID: UUID) { self.tokenID = tokenID }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Token> {
        guard
            let before = try await firstRow(
                "SELECT \(unescaped: Token.columns) FROM tokens WHERE id = \(tokenID) FOR UPDATE", on: connection, logger: database.logger,
                Token.decode)
        else { throw Problem.notFound("Token \(tokenID.uuidString.lowercased())") }
        guard before.revokedAt == nil else { throw Problem.invalidTransition("The token is already revoked.", current: "revoked") }
        guard
            let after = try await firstRow(
                "UPDATE tokens SET revoked_at = now() WHERE id = \(tokenID) RETURNING \(unescaped: Token.columns)",
                on: connection, logger: database.logger, Token.decode)
        else { throw Problem.internalError }
        return Audited(
            after,
            event: AuditRecord(
                action: Self.action, tenantID: before.tenantID, targetType: "token", targetID: tokenID.uuidString.lowercased(), reason: nil,
                before: before.snapshot, after: after.snapshot))
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

/// Reads of tenants, operators and tokens, limited by row-level security to what the principal's tenant sees.
public struct TenancyQueries: Sendable {
    let database: Database
    public init(database: Database) { self.database = database }

    /// The principal's operator and token (`session.read`).
    public func session(context: OperationContext) async throws -> Session {
        try context.authorize(.sessionRead)
        guard let tokenID = context.principal.tokenID else { throw Problem.unauthenticated }
        return try await database.transaction(for: context) { connection in
            guard
                let session = try await firstRow(
                    """
                    SELECT o.id, o.email, o.role, t.tenant_id, t.id, t.name, t.expires_at
                    FROM tokens t JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id WHERE t.id = \(tokenID)
                    """, on: connection, logger: database.logger,
                    { row in
                        let c = try row.decode((UUID, String, String, UUID, UUID, String, Date).self)
                        return Session(
                            operatorID: c.0, email: c.1, role: try Role(known: c.2), tenantID: c.3, tokenID: c.4, tokenName: c.5, expiresAt: c.6)
                    })
            else { throw Problem.unauthenticated }
            return session
        }
    }

    public func tenants(afterSlug: String, limit: Int, context: OperationContext) async throws -> [Tenant] {
        try context.authorize(.tenantsList)
        return try await database.transaction(for: context) { connection in
            var items: [Tenant] = []
            for try await row in try await connection.query(
                "SELECT \(unescaped: Tenant.columns) FROM tenants WHERE id <> \(platformTenantID) AND slug > \(afterSlug) ORDER BY slug LIMIT \(limit)",
                logger: database.logger)
            {
                items.append(try Tenant.decode(row))
            }
            return items
        }
    }

    public func tenant(_ id: UUID, context: OperationContext) async throws -> Tenant {
        try context.authorize(.tenantsRead)
        return try await database.transaction(for: context) { connection in
            guard
                let tenant = try await firstRow(
                    "SELECT \(unescaped: Tenant.columns) FROM tenants WHERE id = \(id)", on: connection, logger: database.logger, Tenant.decode)
            else { throw Problem.notFound("Tenant \(id.uuidString.lowercased())") }
            return tenant
        }
    }

    public func operators(tenantID: UUID?, afterID: UUID, limit: Int, context: OperationContext) async throws -> [Operator] {
        try context.authorize(.operatorsList)
        return try await database.transaction(for: context) { connection in
            var items: [Operator] = []
            for try await row in try await connection.query(
                """
                SELECT \(unescaped: Operator.columns) FROM operators
                WHERE (\(tenantID)::uuid IS NULL OR tenant_id = \(tenantID)) AND id > \(afterID) ORDER BY id LIMIT \(limit)
                """, logger: database.logger)
            {
                items.append(try Operator.decode(row))
            }
            return items
        }
    }

    public func tokens(operatorID: UUID?, afterID: UUID, limit: Int, context: OperationContext) async throws -> [Token] {
        try context.authorize(.tokensList)
        return try await database.transaction(for: context) { connection in
            var items: [Token] = []
            for try await row in try await connection.query(
                """
                SELECT \(unescaped: Token.columns) FROM tokens
                WHERE (\(operatorID)::uuid IS NULL OR operator_id = \(operatorID)) AND id > \(afterID) ORDER BY id LIMIT \(limit)
                """, logger: database.logger)
            {
                items.append(try Token.decode(row))
            }
            return items
        }
    }
}

/// Resolves bearer tokens to principals outside a request (demo credentials, tools): the same
/// `authenticate_request` the edge runs. Revoked, expired and disabled are refused at once.
public struct Authenticator: Sendable {
    let database: Database
    public init(database: Database) { self.database = database }

    public func principal(for secret: String) async throws -> Principal? {
        let token = TokenSecret(value: secret)
        guard token.isWellFormed else { return nil }
        return try await database.requestTransaction(tokenHash: token.hash) { principal, _ in (principal, commit: true) }
    }
}
