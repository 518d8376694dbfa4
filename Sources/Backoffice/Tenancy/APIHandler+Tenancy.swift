import BackofficeAPI
import BackofficePlatform
import Foundation

extension Tenant {
    var api: Components.Schemas.Tenant {
        Components.Schemas.Tenant(id: id.text, slug: slug, name: name, createdAt: createdAt, version: version)
    }
}

extension Operator {
    var api: Components.Schemas.Operator {
        get throws {
            Components.Schemas.Operator(
                id: id.text, tenantId: tenantID.text, email: email, role: try .init(known: role.rawValue),
                kind: try .init(known: kind),
                status: try .init(known: status), createdAt: createdAt, disabledAt: disabledAt, version: version)
        }
    }
}

extension Token {
    var api: Components.Schemas.Token {
        get throws {
            Components.Schemas.Token(
                id: id.text, operatorId: operatorID.text, tenantId: tenantID.text,
                role: try .init(known: role.rawValue), name: name,
                createdAt: createdAt, expiresAt: expiresAt, lastUsedAt: lastUsedAt, revokedAt: revokedAt,
                scopes: scopes, allowedAddresses: allowedAddresses)
        }
    }
}

extension Components.Schemas.TokenCreated: SecretBearing {
    package func withoutSecret() -> Self { Self(token: token, secret: nil, secretAlreadyDelivered: true) }
}

extension Components.Schemas.InvitationCreated: SecretBearing {
    package func withoutSecret() -> Self {
        Self(
            operatorId: operatorId, email: email, expiresAt: expiresAt, sentTo: sentTo, linkPath: nil,
            linkAlreadyDelivered: linkPath != nil ? true : nil)
    }
}

extension APIHandler {
    func inviteOperator(_ input: Operations.InviteOperator.Input) async throws -> Operations.InviteOperator.Output {
        let id = try parseID(input.path.operatorId, "operator_id")
        let body =
            if case .json(let body)? = input.body { body } else {
                Operations.InviteOperator.Input.Body.JsonPayload?.none
            }
        let invite = InviteOperator(operatorID: id, links: invitationLinks, showLink: body?.showLink ?? false)
        let invited = try await change(invite, on: id, body: body, status: 201) { invitation in
            Components.Schemas.InvitationCreated(
                operatorId: invitation.operatorID.text, email: invitation.email, expiresAt: invitation.expiresAt,
                sentTo: invitation.sentTo,
                linkPath: invitation.path)
        }
        return .created(.init(headers: .init(cacheControl: "no-store"), body: .json(invited)))
    }

    func whoAmI(_ input: Operations.WhoAmI.Input) async throws -> Operations.WhoAmI.Output {
        let session = try await read(CurrentSession())
        return .ok(
            .init(
                body: .json(
                    .init(
                        operatorId: session.operatorID.text, email: session.email,
                        role: try .init(known: session.role.rawValue),
                        tenantId: session.tenantID.text, tokenId: session.tokenID.text, tokenName: session.tokenName,
                        expiresAt: session.expiresAt))))
    }

    func listTenants(_ input: Operations.ListTenants.Input) async throws -> Operations.ListTenants.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.decode(input.query.cursor, count: 1)?[0] ?? ""
        let tenants = try await read(ListTenants(afterSlug: after, limit: limit + 1))
        let (items, next) = keysetPage(tenants, limit: limit) { [$0.slug] }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func createTenant(_ input: Operations.CreateTenant.Input) async throws -> Operations.CreateTenant.Output {
        let body: Components.Schemas.TenantCreate = try json(input.body)
        let tenant = try await change(
            CreateTenant(slug: body.slug, name: body.name), body: body, status: 201
        ) { $0.api }
        return .created(.init(headers: .init(eTag: EntityTag.of(tenant.version)), body: .json(tenant)))
    }

    func getTenant(_ input: Operations.GetTenant.Input) async throws -> Operations.GetTenant.Output {
        let tenant = try await read(GetTenant(id: try parseID(input.path.tenantId, "tenant_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(tenant.version)), body: .json(tenant.api)))
    }

    func listOperators(_ input: Operations.ListOperators.Input) async throws -> Operations.ListOperators.Output {
        let tenantID = try parseID(input.query.tenantId, "tenant_id")
        let (items, next) = try await listedByID(
            Operator.self, owner: tenantID, limit: input.query.limit, cursor: input.query.cursor
        ) { try $0.api }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func createOperator(_ input: Operations.CreateOperator.Input) async throws -> Operations.CreateOperator.Output {
        let body: Components.Schemas.OperatorCreate = try json(input.body)
        let create = CreateOperator(
            email: body.email, role: try Role(known: body.role.rawValue),
            tenantID: try parseID(body.tenantId, "tenant_id"), reason: body.reason)
        switch try await changeUnlessHeld(create, body: body, status: 201, respond: { try $0.api }) {
        case .done(let created):
            return .created(.init(headers: .init(eTag: EntityTag.of(created.version)), body: .json(created)))
        case .held(let request): return .accepted(.init(body: .json(request)))
        }
    }

    func disableOperator(_ input: Operations.DisableOperator.Input) async throws -> Operations.DisableOperator.Output {
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let id = try parseID(input.path.operatorId, "operator_id")
        let disabled = try await change(
            DisableOperator(operatorID: id, reason: body.reason, ifMatch: input.headers.ifMatch), on: id, body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(disabled.version)), body: .json(disabled)))
    }

    func listTokens(_ input: Operations.ListTokens.Input) async throws -> Operations.ListTokens.Output {
        let operatorID = try parseID(input.query.operatorId, "operator_id")
        let (items, next) = try await listedByID(
            Token.self, owner: operatorID, limit: input.query.limit, cursor: input.query.cursor
        ) { try $0.api }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func createToken(_ input: Operations.CreateToken.Input) async throws -> Operations.CreateToken.Output {
        let body: Components.Schemas.TokenCreate = try json(input.body)
        let create = CreateToken(
            operatorID: try parseID(body.operatorId, "operator_id"), name: body.name,
            expiresInHours: body.expiresInHours, scopes: body.scopes, allowedAddresses: body.allowedAddresses)
        let created = try await change(
            create, body: body, status: 201
        ) { token, secret in
            Components.Schemas.TokenCreated(token: try token.api, secret: secret.value)
        }
        return .created(.init(headers: .init(cacheControl: "no-store"), body: .json(created)))
    }

    func revokeToken(_ input: Operations.RevokeToken.Input) async throws -> Operations.RevokeToken.Output {
        let id = try parseID(input.path.tokenId, "token_id")
        let token = try await change(
            RevokeToken(tokenID: id), on: id, body: String?.none
        ) { try $0.api }
        return .ok(.init(body: .json(token)))
    }
}
