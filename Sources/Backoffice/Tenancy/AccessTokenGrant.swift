import BackofficePlatform
import Foundation
import NIOCore
import PostgresNIO

/// The token endpoint's refusals (RFC 6749 §5.2): the problem's `code` is the OAuth error, which
/// the problem also carries as `error` and `error_description`.
package enum OAuthRefusal: DomainRefusal, Equatable {
    /// Unknown client, wrong secret, a revoked client, or a call from outside its networks (401).
    case invalidClient
    case invalidRequest(String)
    case unsupportedGrantType
    case invalidScope(String)

    package var problem: Problem {
        let (status, code, title, detail): (Int, String, String, String) =
            switch self {
            case .invalidClient:
                (
                    401, "invalid_client", "Client authentication failed",
                    "The client is unknown, revoked, not allowed from this address, or its secret is wrong."
                )
            case .invalidRequest(let detail): (400, "invalid_request", "Invalid token request", detail)
            case .unsupportedGrantType:
                (
                    400, "unsupported_grant_type", "Unsupported grant type",
                    "Only grant_type=client_credentials is offered."
                )
            case .invalidScope(let detail): (400, "invalid_scope", "Invalid scope", detail)
            }
        var problem = Problem(status: status, code: code, title: title, detail: detail)
        // RFC 6749 §5.2: a client that failed to authenticate is told the scheme (HTTP Basic).
        if self == .invalidClient { problem.wwwAuthenticate = #"Basic realm="oauth""# }
        return problem
    }
}

/// A client's credentials as the token endpoint received them: its secret from HTTP Basic
/// (`client_secret_basic`, RFC 6749 §2.3.1: each part form-encoded) or from the form
/// (`client_secret_post`), or a signed assertion (`private_key_jwt`, RFC 7523). Never logged,
/// never stored: only the secret's hash is compared, and an assertion's `jti` kept.
package struct ClientCredentials: Sendable {
    /// What proves the client.
    package enum Proof: Sendable {
        case secret(String)
        case assertion(String)
    }
    /// The client id as sent: required with a secret, optional with an assertion (its `iss`).
    package let clientID: String?
    package let proof: Proof

    /// The registered, unrevoked client these credentials name and prove, called from one of its
    /// networks (`issuer`: the service's, an assertion's audience).
    /// - Throws: `invalid_request` without credentials, `invalid_client` for anything else.
    static func authenticate(_ credentials: ClientCredentials?, issuer: String, in unit: UnitOfWork) async throws
        -> OAuthClient
    {
        guard let credentials else {
            throw OAuthRefusal.invalidRequest(
                "Authenticate the client: HTTP Basic, client_id and client_secret, or a client_assertion.")
        }
        let client: OAuthClient?
        switch credentials.proof {
        case .secret(let secret):
            let id = credentials.clientID.flatMap(UUID.init(uuidString:))
            client = id == nil ? nil : try await activeClient(id!, secret: secret, in: unit)
        case .assertion(let assertion):
            client = try await ClientAssertion.authenticate(
                assertion, clientID: credentials.clientID, issuer: issuer, in: unit)
        }
        guard let client,
            Principal(
                operatorID: client.operatorID, role: client.role, tenantID: client.tenantID, tokenID: nil,
                allowedAddresses: client.allowedAddresses?.compactMap { try? CIDR($0) }
            ).accepts(from: unit.context.sourceIP ?? "")
        else { throw OAuthRefusal.invalidClient }
        return client
    }

    /// The unrevoked client `id` whose operator is active (and whose secret is `secret`, when given).
    static func activeClient(_ id: UUID, secret: String? = nil, in unit: UnitOfWork) async throws -> OAuthClient? {
        let hash = secret.map { ByteBuffer(bytes: TokenSecret(value: $0).hash) }
        return try await unit.first(
            """
            SELECT \(unescaped: OAuthClient.columns) FROM oauth_clients c
            WHERE id = \(id) AND (\(hash)::bytea IS NULL OR secret_hash = \(hash)) AND revoked_at IS NULL
                AND EXISTS (SELECT 1 FROM operators o WHERE o.id = c.operator_id AND o.status = 'active')
            """, OAuthClient.init(row:))
    }

    /// The credentials of an `Authorization: Basic` header, of the form's secret, or of its
    /// assertion; nil when none or more than one carry them (RFC 6749: one method per request),
    /// or for an assertion of another type than RFC 7523's JWT bearer.
    package init?(
        authorization: String?, formID: String?, formSecret: String?, assertionType: String? = nil,
        assertion: String? = nil
    ) {
        let basic = authorization.map { $0.count > 6 && $0.prefix(6).lowercased() == "basic " } ?? false
        if let assertion {
            guard !basic, formSecret == nil, assertionType == ClientAssertion.type else { return nil }
            (clientID, proof) = (formID, .assertion(assertion))
        } else if basic, let header = authorization {
            guard formSecret == nil, assertionType == nil, let data = Data(base64Encoded: String(header.dropFirst(6))),
                let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":"),
                let id = String(text[..<colon]).removingPercentEncoding,
                let secret = String(text[text.index(after: colon)...]).removingPercentEncoding
            else { return nil }
            (clientID, proof) = (id, .secret(secret))
        } else if let formID, let formSecret, assertionType == nil {
            (clientID, proof) = (formID, .secret(formSecret))
        } else {
            return nil
        }
    }
}

/// Exchanges a client's credentials for an access token (`oauth.token`, public: the client
/// authenticates itself). The token is a JWT (`AccessTokens`) and a row of `tokens` by its hash,
/// of the client's operator, narrowed to the scopes asked for (each one of the client's; none
/// asked: all of them) and bound to the client's networks, for 15 minutes. Audited per issue.
package struct IssueAccessToken: AuditedOperation {
    package static let action: Action = "oauth.token"
    let grantType: String
    let scope: String?
    let credentials: ClientCredentials?
    let signer: AccessTokens

    package init(grantType: String, scope: String?, credentials: ClientCredentials?, signer: AccessTokens) {
        (self.grantType, self.scope, self.credentials, self.signer) = (grantType, scope, credentials, signer)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(token: String, scopes: [String])> {
        guard grantType == "client_credentials" else { throw OAuthRefusal.unsupportedGrantType }
        let client = try await ClientCredentials.authenticate(credentials, issuer: signer.issuer, in: unit)
        let id = client.id
        let granted = try Self.scopes(asked: scope, of: client)
        let tokenID = unit.newID()
        let claims = AccessTokens.Claims(
            issuer: signer.issuer, audience: signer.audience, operatorID: client.operatorID, clientID: id,
            scopes: granted, tokenID: tokenID, issuedAt: unit.now)
        guard
            let generation = try await unit.first(
                "SELECT generation FROM oauth_signing_keys WHERE retired_at IS NULL", { Int(try $0.decode(Int32.self)) }
            )
        else { throw DomainError.inconsistent("no current signing key generation") }
        let jwt = try signer.sign(claims, generation: generation)
        try await unit.execute(
            """
            INSERT INTO tokens (tenant_id, id, operator_id, name, secret_hash, role, expires_at, created_at, scopes,
                allowed_addresses, client_id)
            VALUES (\(client.tenantID), \(tokenID), \(client.operatorID), 'oauth access token',
                \(ByteBuffer(bytes: TokenSecret(value: jwt).hash)), \(client.role.rawValue),
                \(Date(timeIntervalSince1970: TimeInterval(claims.exp))), \(unit.now), \(granted),
                \(client.allowedAddresses)::cidr[], \(id))
            """)
        let event = AuditRecord(
            action: Self.action, tenantID: client.tenantID, targetType: "oauth_client", targetID: id.text,
            reason: nil, before: nil,
            after: try AuditRecord.json(["token_id": tokenID.text, "scope": claims.scope]))
        return Audited((jwt, granted), event: event)
    }

    /// The scopes asked for (space-separated), each one of the client's; none asked: all of them.
    private static func scopes(asked: String?, of client: OAuthClient) throws -> [String] {
        let asked = (asked ?? "").split(separator: " ").map(String.init)
        guard !asked.isEmpty else { return client.scopes }
        let unknown = asked.filter { !client.scopes.contains($0) }
        guard unknown.isEmpty else {
            throw OAuthRefusal.invalidScope(
                "Not a scope of this client: \(unknown.prefix(5).map { String($0.prefix(64)) }.joined(separator: " "))."
            )
        }
        return Array(Set(asked)).sorted()
    }
}
