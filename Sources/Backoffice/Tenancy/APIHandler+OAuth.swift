import BackofficeAPI
import BackofficePlatform
import Foundation

extension OAuthClient {
    var api: Components.Schemas.OAuthClient {
        get throws {
            Components.Schemas.OAuthClient(
                id: id.text, tenantId: tenantID.text, operatorId: operatorID.text, name: name,
                role: try .init(known: role.rawValue), scopes: scopes, allowedAddresses: allowedAddresses,
                createdAt: createdAt, revokedAt: revokedAt,
                tokenEndpointAuthMethod: try .init(known: authMethod),
                jwks: publicKeys.map { .init(keys: $0.map { .init(kty: "OKP", crv: "Ed25519", x: $0) }) })
        }
    }
}

extension Components.Schemas.OAuthClientCreated: SecretBearing {
    package func withoutSecret() -> Self { Self(client: client, clientSecret: nil, secretAlreadyDelivered: true) }
}

extension APIHandler {
    func registerOAuthClient(_ input: Operations.RegisterOAuthClient.Input) async throws
        -> Operations.RegisterOAuthClient.Output
    {
        let body: Components.Schemas.OAuthClientDraft = try json(input.body)
        let register = RegisterOAuthClient(
            name: body.name, role: try Role(known: body.role.rawValue),
            tenantID: try body.tenantId.map { try parseID($0, "tenant_id") }, scopes: body.scopes,
            allowedAddresses: body.allowedAddresses, reason: body.reason,
            publicKeys: body.publicKeys)
        switch try await changeUnlessHeld(register, body: body, status: 201, respond: Self.withSecret) {
        case .done(let created): return .created(.init(headers: .init(cacheControl: "no-store"), body: .json(created)))
        case .held(let request): return .accepted(.init(body: .json(request)))
        }
    }

    func issueOAuthClientSecret(_ input: Operations.IssueOAuthClientSecret.Input) async throws
        -> Operations.IssueOAuthClientSecret.Output
    {
        let id = try parseID(input.path.clientId, "client_id")
        let issued = try await change(IssueOAuthClientSecret(clientID: id), on: id, body: String?.none, status: 201) {
            try Self.withSecret(($0.0, $0.1))
        }
        return .created(.init(headers: .init(cacheControl: "no-store"), body: .json(issued)))
    }

    /// A client with its secret, as delivered once (an Idempotency-Key replay withholds it).
    @Sendable private static func withSecret(_ issued: (OAuthClient, TokenSecret?)) throws
        -> Components.Schemas.OAuthClientCreated
    {
        Components.Schemas.OAuthClientCreated(client: try issued.0.api, clientSecret: issued.1?.value)
    }

    func listOAuthClients(_ input: Operations.ListOAuthClients.Input) async throws
        -> Operations.ListOAuthClients.Output
    {
        let (items, next) = try await listedByID(
            OAuthClient.self, owner: nil, limit: input.query.limit, cursor: input.query.cursor
        ) { try $0.api }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func revokeOAuthClient(_ input: Operations.RevokeOAuthClient.Input) async throws
        -> Operations.RevokeOAuthClient.Output
    {
        let id = try parseID(input.path.clientId, "client_id")
        let client = try await change(RevokeOAuthClient(clientID: id), on: id, body: String?.none) { try $0.api }
        return .ok(.init(body: .json(client)))
    }

    /// The token endpoint: the client's credentials from `Authorization: Basic` (which the edge
    /// hands over for this public operation only) or the form.
    func requestAccessToken(_ input: Operations.RequestAccessToken.Input) async throws
        -> Operations.RequestAccessToken.Output
    {
        let form: Components.Schemas.TokenRequest = try json(input.body, expected: "application/x-www-form-urlencoded")
        let credentials = ClientCredentials(
            authorization: try scope().clientAuthorization, formID: form.clientId, formSecret: form.clientSecret,
            assertionType: form.clientAssertionType, assertion: form.clientAssertion)
        let (token, scopes) = try await publicChange(
            IssueAccessToken(
                grantType: form.grantType, scope: form.scope, credentials: credentials, signer: accessTokens))
        return .ok(
            .init(
                headers: .init(cacheControl: "no-store"),
                body: .json(
                    .init(
                        accessToken: token, tokenType: .bearer, expiresIn: Int(AccessTokens.lifetime),
                        scope: scopes.joined(separator: " ")))))
    }

    func revokeAccessToken(_ input: Operations.RevokeAccessToken.Input) async throws
        -> Operations.RevokeAccessToken.Output
    {
        let form: Components.Schemas.TokenHandle = try json(input.body, expected: "application/x-www-form-urlencoded")
        _ = try await publicChange(RevokeAccessToken(try held(form)))
        return .ok(.init())
    }

    func introspectToken(_ input: Operations.IntrospectToken.Input) async throws -> Operations.IntrospectToken.Output {
        let form: Components.Schemas.TokenHandle = try json(input.body, expected: "application/x-www-form-urlencoded")
        let facts = try await publicChange(IntrospectToken(try held(form)))
        var answer = Components.Schemas.TokenIntrospection(active: facts != nil)
        if let facts {
            answer.scope = facts.scopes.joined(separator: " ")
            answer.clientId = facts.clientID?.text
            answer.sub = facts.operatorID.text
            answer.role = try .init(known: facts.role.rawValue)
            answer.jti = facts.tokenID.text
            answer.tokenType = .bearer
            answer.iat = Int(facts.issuedAt.timeIntervalSince1970)
            answer.exp = Int(facts.expiresAt.timeIntervalSince1970)
            answer.iss = accessTokens.issuer
        }
        return .ok(.init(headers: .init(cacheControl: "no-store"), body: .json(answer)))
    }

    func rotateSigningKey(_ input: Operations.RotateSigningKey.Input) async throws -> Operations.RotateSigningKey.Output
    {
        let current = try await change(RotateSigningKey(), body: String?.none) { $0 }
        let published = try await SigningKeyGenerations.read(database).map { "g\($0)" }
        return .ok(.init(body: .json(.init(current: "g\(current)", published: published))))
    }

    /// A revocation's or introspection's token, with the client's credentials: Basic, else the form's.
    private func held(_ form: Components.Schemas.TokenHandle) throws -> HeldToken {
        HeldToken(
            form.token,
            credentials: ClientCredentials(
                authorization: try scope().clientAuthorization, formID: form.clientId, formSecret: form.clientSecret,
                assertionType: form.clientAssertionType, assertion: form.clientAssertion),
            issuer: accessTokens.issuer)
    }
}
