import BackofficeAPI
import Foundation

extension Tenant {
    var api: Components.Schemas.Tenant {
        Components.Schemas.Tenant(id: id.text, slug: slug, name: name, createdAt: createdAt, version: version)
    }
}

extension Operator {
    var api: Components.Schemas.Operator {
        Components.Schemas.Operator(
            id: id.text, tenantId: tenantID.text, email: email, role: .init(rawValue: role.rawValue) ?? .partnerStaff,
            kind: .init(rawValue: kind) ?? .person, status: .init(rawValue: status) ?? .active, createdAt: createdAt, disabledAt: disabledAt,
            version: version)
    }
}

extension Token {
    var api: Components.Schemas.Token {
        Components.Schemas.Token(
            id: id.text, operatorId: operatorID.text, tenantId: tenantID.text, role: .init(rawValue: role.rawValue) ?? .partnerStaff, name: name,
            createdAt: createdAt, expiresAt: expiresAt, lastUsedAt: lastUsedAt, revokedAt: revokedAt)
    }
}

extension Components.Schemas.TokenCreated: SecretBearing {
    func withoutSecret() -> Self { Self(token: token, secret: nil, secretAlreadyDelivered: true) }
}

private struct IDRequest<Body: Encodable>: Encodable {
    let id: String
    let body: Body?
}

extension APIHandler {
    func whoAmI(_ input: Operations.WhoAmI.Input) async throws -> Operations.WhoAmI.Output {
        let session = try await TenancyQueries(database: database).session(context: try context())
        return .ok(
            .init(
                body: .json(
                    .init(
                        operatorId: session.operatorID.text, email: session.email, role: try .init(known: session.role.rawValue),
                        tenantId: session.tenantID.text,
                        tokenId: session.tokenID.text, tokenName: session.tokenName, expiresAt: session.expiresAt))))
    }

    func listTenants(_ input: Operations.ListTenants.Input) async throws -> Operations.ListTenants.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.decode(input.query.cursor, count: 1)?[0] ?? ""
        let tenants = try await TenancyQueries(database: database).tenants(afterSlug: after, limit: limit + 1, context: try context())
        let (items, next) = keysetPage(tenants, limit: limit) { [$0.slug] }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func createTenant(_ input: Operations.CreateTenant.Input) async throws -> Operations.CreateTenant.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let stored = try await idempotency.run(
            CreateTenant(slug: body.slug, name: body.name), key: input.headers.idempotencyKey, request: body,
            operationID: Operations.CreateTenant.id, context: try context()
        ) { tenant in
            StoredResponse(status: 201, body: tenant.api)
        }
        return .created(.init(headers: .init(eTag: EntityTag.of(stored.body.version)), body: .json(stored.body)))
    }

    func getTenant(_ input: Operations.GetTenant.Input) async throws -> Operations.GetTenant.Output {
        let tenant = try await TenancyQueries(database: database).tenant(try parseID(input.path.tenantId, "tenant_id"), context: try context())
        return .ok(.init(headers: .init(eTag: EntityTag.of(tenant.version)), body: .json(tenant.api)))
    }

    func listOperators(_ input: Operations.ListOperators.Input) async throws -> Operations.ListOperators.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.decode(input.query.cursor, count: 1).map { try parseID($0[0], "cursor") as UUID } ?? platformTenantID
        let operators = try await TenancyQueries(database: database).operators(
            tenantID: try parseID(input.query.tenantId, "tenant_id"), afterID: after, limit: limit + 1, context: try context())
        let (items, next) = keysetPage(operators, limit: limit) { [$0.id.text] }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func createOperator(_ input: Operations.CreateOperator.Input) async throws -> Operations.CreateOperator.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let role = try Role(known: body.role.rawValue)
        let stored = try await idempotency.run(
            CreateOperator(email: body.email, role: role, tenantID: try parseID(body.tenantId, "tenant_id")), key: input.headers.idempotencyKey,
            request: body, operationID: Operations.CreateOperator.id, context: try context()
        ) { created in
            StoredResponse(status: 201, body: created.api)
        }
        return .created(.init(headers: .init(eTag: EntityTag.of(stored.body.version)), body: .json(stored.body)))
    }

    func disableOperator(_ input: Operations.DisableOperator.Input) async throws -> Operations.DisableOperator.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.operatorId, "operator_id")
        let stored = try await idempotency.run(
            DisableOperator(operatorID: id, reason: body.reason, ifMatch: input.headers.ifMatch), key: input.headers.idempotencyKey,
            request: IDRequest(id: id.text, body: body), operationID: Operations.DisableOperator.id, context: try context()
        ) { disabled in
            StoredResponse(status: 200, body: disabled.api)
        }
        return .ok(.init(headers: .init(eTag: EntityTag.of(stored.body.version)), body: .json(stored.body)))
    }

    func listTokens(_ input: Operations.ListTokens.Input) async throws -> Operations.ListTokens.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.decode(input.query.cursor, count: 1).map { try parseID($0[0], "cursor") as UUID } ?? platformTenantID
        let tokens = try await TenancyQueries(database: database).tokens(
            operatorID: try parseID(input.query.operatorId, "operator_id"), afterID: after, limit: limit + 1, context: try context())
        let (items, next) = keysetPage(tokens, limit: limit) { [$0.id.text] }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func createToken(_ input: Operations.CreateToken.Input) async throws -> Operations.CreateToken.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let stored = try await idempotency.run(
            CreateToken(operatorID: try parseID(body.operatorId, "operator_id"), name: body.name, expiresInHours: body.expiresInHours),
            key: input.headers.idempotencyKey, request: body, operationID: Operations.CreateToken.id, context: try context()
        ) { token, secret in
            StoredResponse(status: 201, body: Components.Schemas.TokenCreated(token: token.api, secret: secret.value))
        }
        return .created(.init(headers: .init(cacheControl: "no-store"), body: .json(stored.body)))
    }

    func revokeToken(_ input: Operations.RevokeToken.Input) async throws -> Operations.RevokeToken.Output {
        let id = try parseID(input.path.tokenId, "token_id")
        let stored = try await idempotency.run(
            RevokeToken(tokenID: id), key: input.headers.idempotencyKey, request: IDRequest<String>(id: id.text, body: nil),
            operationID: Operations.RevokeToken.id, context: try context()
        ) { token in
            StoredResponse(status: 200, body: token.api)
        }
        return .ok(.init(body: .json(stored.body)))
    }
}
