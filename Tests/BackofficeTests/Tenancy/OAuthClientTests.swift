import Dispatch
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// OAuth 2.0 client credentials: a partner's machine client gets 15-minute signed access tokens
/// narrowed to its scopes; a forged, expired, misdirected or revoked token is refused.
@Suite("OAuth clients: client credentials, signed access tokens")
struct OAuthClientTests {
    /// The signer of the test servers (`withApp`): keys derived from the test's server key.
    static let signer = AccessTokens(
        issuer: "http://127.0.0.1:0", key: TestEnvironment.secondFactorKey.derived(for: "oauth-access-tokens"))

    @Test(
        """
        a partner admin registers a client (secret once, audited); Basic and form credentials get a JWT that \
        reads orders and is refused the goods; a wrong secret, an unknown client, another grant, a foreign scope \
        are refused as RFC 6749 says; revoking the client refuses its live token
        """
    )
    func clientCredentials() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                let made = try await client.call(
                    .post, "/v1/oauth-clients", token: admin,
                    json: #"{"name":"stock sync","role":"partner_staff","scopes":["orders:read","goods:read"]}"#,
                    headers: .newIdempotencyKey)
                #expect(made.status == 201, "\(made.text)")
                let id = try #require((made.json["client"] as? [String: Any])?["id"] as? String)
                let secret = try #require(made["client_secret"])
                #expect(secret.hasPrefix("oc_"))
                let stored = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE after::text LIKE '%\(secret)%'", as: Int.self)
                #expect(stored == 0, "the secret is in no audit event")

                let basic = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
                let granted = try await Self.token(client, form: "grant_type=client_credentials", basic: basic)
                #expect(granted.status == 200, "\(granted.text) \(basic)")
                #expect(granted["token_type"] == "Bearer" && granted["scope"] == "goods:read orders:read")
                let jwt = try #require(granted["access_token"])
                #expect(
                    Self.signer.verify(jwt, at: env.clock.now(), generations: [1])?.client_id == id,
                    "signed by the service")
                #expect(try await client.call(.get, "/v1/orders", token: jwt).status == 200)
                let narrowed = try await Self.token(
                    client,
                    form: "grant_type=client_credentials&scope=orders%3Aread&client_id=\(id)&client_secret=\(secret)")
                let orders = try #require(narrowed["access_token"])
                let goods = try await client.call(.get, "/v1/goods", token: orders)
                #expect(goods.status == 403 && goods["code"] == "insufficient_scope", "\(goods.text)")

                let refusals: [(String, String?, Int, String)] = [
                    (
                        "grant_type=client_credentials", "Basic " + Data("\(id):oc_wrong".utf8).base64EncodedString(),
                        401,
                        "invalid_client"
                    ),
                    (
                        "grant_type=client_credentials&client_id=\(UUID().uuidString)&client_secret=\(secret)", nil,
                        401,
                        "invalid_client"
                    ),
                    ("grant_type=client_credentials", nil, 400, "invalid_request"),
                    ("grant_type=password&username=a&password=b", basic, 400, "unsupported_grant_type"),
                    ("grant_type=client_credentials&scope=tenants%3Awrite", basic, 400, "invalid_scope"),
                ]
                for (form, header, status, error) in refusals {
                    let reply = try await Self.token(client, form: form, basic: header)
                    #expect(reply.status == status && reply["error"] == error, "\(form): \(reply.text)")
                }
                let revoked = try await client.call(
                    .delete, "/v1/oauth-clients/\(id)", token: admin, headers: .newIdempotencyKey)
                #expect(revoked.status == 200, "\(revoked.text)")
                #expect(try await client.call(.get, "/v1/orders", token: jwt).status == 401, "its live token")
                let again = try await Self.token(client, form: "grant_type=client_credentials", basic: basic)
                #expect(again.status == 401 && again["error"] == "invalid_client")
            }
            let events = try await env.ownerScalar(
                """
                SELECT count(*) FROM audit_events
                WHERE action IN ('oauth_clients.create', 'oauth.token', 'oauth_clients.revoke')
                """,
                as: Int.self)
            #expect(events == 4, "registered, two tokens issued, revoked: \(events ?? -1)")
        }
    }

    @Test(
        """
        a JWT is taken only as the service signed it: a good one authenticates; a wrong signature, alg none, an \
        expired exp, another audience or issuer, a revoked jti are refused 401, though the database holds each \
        one's row
        """
    )
    func forgedTokensAreRefused() async throws {
        try await TestEnvironment.with { env in
            let manager = try #require(env.fixture.principals[.backendManager]?.operatorID)
            let now = env.clock.now()
            let signer = Self.signer
            func claims(issuer: String? = nil, audience: String? = nil, issued: Date? = nil) -> AccessTokens.Claims {
                AccessTokens.Claims(
                    issuer: issuer ?? signer.issuer, audience: audience ?? signer.audience, operatorID: manager,
                    clientID: UUID(), scopes: ["customers:read"], tokenID: UUID(), issuedAt: issued ?? now)
            }
            let good = try signer.sign(claims(), generation: 1)
            let parts = good.split(separator: ".").map(String.init)
            let flipped = parts[2].first == "A" ? "B" + parts[2].dropFirst() : "A" + parts[2].dropFirst()
            let none = Base64URL.encode(Data(#"{"alg":"none","kid":"g1","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + "."
            let other = AccessTokens(issuer: signer.issuer, key: .init(size: .bits256))
            let cases: [(String, String)] = [
                ("wrong signature", parts[0] + "." + parts[1] + "." + flipped),
                ("alg none", none),
                ("another key", try other.sign(claims(), generation: 1)),
                ("a key generation never made", try signer.sign(claims(), generation: 7)),
                ("expired", try signer.sign(claims(issued: now.addingTimeInterval(-16 * 60)), generation: 1)),
                ("another audience", try signer.sign(claims(audience: "https://elsewhere.example/v1"), generation: 1)),
                ("another issuer", try signer.sign(claims(issuer: "https://elsewhere.example"), generation: 1)),
            ]
            for token in [good] + cases.map(\.1) {  // every one a live row: only the JWT's checks refuse it
                try await env.asOwner(
                    """
                    INSERT INTO tokens (tenant_id, id, operator_id, name, secret_hash, role, expires_at, created_at)
                    VALUES ('\(platformTenantID.text)', '\(UUID().text)', '\(manager.text)', 'forged',
                        decode('\(hex(TokenSecret(value: token).hash))', 'hex'), 'backend_manager',
                        now() + interval '1 hour', now())
                    """)
            }
            try await env.withApp { client in
                #expect(try await client.call(.get, "/v1/customers", token: good).status == 200, "the good one")
                for (what, token) in cases {
                    let reply = try await client.call(.get, "/v1/customers", token: token)
                    #expect(reply.status == 401, "\(what): \(reply.status) \(reply.text.prefix(200))")
                }
                let hash = hex(TokenSecret(value: good).hash)
                try await env.asOwner(
                    "UPDATE tokens SET revoked_at = now() WHERE secret_hash = decode('\(hash)', 'hex')")
                #expect(try await client.call(.get, "/v1/customers", token: good).status == 401, "revoked")
            }
        }
    }

    @Test(
        """
        introspection (RFC 7662): a client learns a live token of its shop is active with its scopes, an API token \
        too; another shop's, a revoked or a made-up one is only inactive; revocation (RFC 7009): a client revokes \
        its own token (audited), not another client's, and an unknown token is answered alike
        """
    )
    func introspectionAndRevocation() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                func register(_ admin: String) async throws -> (id: String, basic: String) {
                    let made = try await client.call(
                        .post, "/v1/oauth-clients", token: admin,
                        json: #"{"name":"gateway","role":"partner_staff","scopes":["orders:read"]}"#,
                        headers: .newIdempotencyKey)
                    let id = try #require((made.json["client"] as? [String: Any])?["id"] as? String)
                    let secret = try #require(made["client_secret"])
                    return (id, "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())
                }
                let alpha = try await register(env.fixture.partners[0].adminToken)
                let beta = try await register(env.fixture.partners[1].adminToken)
                let jwt = try #require(
                    try await Self.token(client, form: "grant_type=client_credentials", basic: alpha.basic)[
                        "access_token"])
                let encoded = jwt.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? jwt
                let live = try await Self.token(
                    client, form: "token=\(encoded)", basic: alpha.basic, path: "/oauth/introspect")
                #expect(live.status == 200 && live.json["active"] as? Bool == true, "\(live.text)")
                #expect(live["scope"] == "orders:read" && live["client_id"] == alpha.id, "\(live.text)")
                let apiToken = try await Self.token(
                    client, form: "token=\(env.fixture.partners[0].staffToken)", basic: alpha.basic,
                    path: "/oauth/introspect")
                #expect(apiToken.json["active"] as? Bool == true && apiToken["role"] == "partner_staff")
                for (what, form, basic) in [
                    ("another shop's client", "token=\(encoded)", beta.basic),
                    ("a made-up token", "token=bo_nothing", alpha.basic),
                ] {
                    let reply = try await Self.token(client, form: form, basic: basic, path: "/oauth/introspect")
                    #expect(reply.status == 200 && reply.text.contains(#""active":false"#), "\(what): \(reply.text)")
                    #expect(reply.json["scope"] == nil, "\(what): nothing more")
                }
                let notTheirs = try await Self.token(
                    client, form: "token=\(encoded)", basic: beta.basic, path: "/oauth/revoke")
                #expect(notTheirs.status == 200)
                #expect(try await client.call(.get, "/v1/orders", token: jwt).status == 200, "another client's: kept")
                let revoked = try await Self.token(
                    client, form: "token=\(encoded)", basic: alpha.basic, path: "/oauth/revoke")
                #expect(revoked.status == 200)
                #expect(try await client.call(.get, "/v1/orders", token: jwt).status == 401, "revoked")
                let after = try await Self.token(
                    client, form: "token=\(encoded)", basic: alpha.basic, path: "/oauth/introspect")
                #expect(after.text.contains(#""active":false"#), "\(after.text)")
                let wrong = try await Self.token(
                    client, form: "token=\(encoded)",
                    basic: "Basic " + Data("\(alpha.id):no".utf8).base64EncodedString(),
                    path: "/oauth/revoke")
                #expect(wrong.status == 401 && wrong["error"] == "invalid_client")
            }
            let revocations = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE action = 'oauth.revoke'", as: Int.self)
            #expect(revocations == 1, "one revocation, audited once")
        }
    }

    @Test(
        """
        key rotation: new tokens are signed with the next key at once and both keys are published; a token of the \
        old key keeps working until it expires; once the old key is past its overlap it is refused and unpublished
        """
    )
    func keyRotation() async throws {
        try await TestEnvironment.with { env in
            let made = try await env.database.run(
                RegisterOAuthClient(
                    name: "rotation", role: .appService, tenantID: nil, scopes: ["catalog:read"],
                    allowedAddresses: nil), context: env.context(.platformAdmin))
            let basic = "Basic " + Data("\(made.0.id.text):\(try #require(made.1).value)".utf8).base64EncodedString()
            let old = try await env.withApp { client in
                let old = try #require(
                    try await Self.token(client, form: "grant_type=client_credentials", basic: basic)["access_token"])
                #expect(AccessTokens.generation(of: old) == 1)
                let rotated = try await client.call(
                    .post, "/v1/oauth-keys/rotate", token: env.fixture.tokens[.platformAdmin],
                    headers: .newIdempotencyKey)
                #expect(rotated["current"] == "g2", "\(rotated.text)")
                let new = try #require(
                    try await Self.token(client, form: "grant_type=client_credentials", basic: basic)["access_token"])
                #expect(AccessTokens.generation(of: new) == 2, "signed with the next key at once")
                let jwks = try await client.call(.get, "/.well-known/jwks.json", token: nil)
                let kids = (jwks.json["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String }
                #expect(kids == ["g2", "g1"], "\(jwks.text)")
                for token in [old, new] {
                    #expect(try await client.call(.get, "/v1/catalog", token: token).status == 200)
                }
                return old
            }
            try await env.asOwner(
                "UPDATE oauth_signing_keys SET retired_at = now() - interval '21 minutes' WHERE generation = 1")
            try await env.withApp { client in
                let reply = try await client.call(.get, "/v1/catalog", token: old)
                #expect(reply.status == 401, "the old key past its overlap: \(reply.status)")
                let jwks = try await client.call(.get, "/.well-known/jwks.json", token: nil)
                let kids = (jwks.json["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String }
                #expect(kids == ["g2"], "\(jwks.text)")
            }
        }
    }

    @Test(
        """
        an independent client (Authlib) reads the server's metadata, gets a token with client_secret_basic, reads \
        the orders with it, and verifies it offline against the published keys; a wrong secret is its \
        invalid_client
        """
    )
    func independentClient() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp(trustedProxies: []) { client in
                let base = "http://127.0.0.1:\(try #require(client.port))"
                let made = try await client.call(
                    .post, "/v1/oauth-clients", token: env.fixture.partners[0].adminToken,
                    json: #"{"name":"authlib","role":"partner_staff","scopes":["orders:read","goods:read"]}"#,
                    headers: .newIdempotencyKey)
                let id = try #require((made.json["client"] as? [String: Any])?["id"] as? String)
                let secret = try #require(made["client_secret"])
                let got = try await Self.python(["ops/lib/oauth-client.py", base, id, secret, "orders:read"])
                let answer = try JSONSerialization.jsonObject(with: Data(got.utf8)) as? [String: Any]
                #expect(answer?["token_type"] as? String == "Bearer", "\(got)")
                #expect(answer?["orders_status"] as? Int == 200, "\(got)")
                let claims = answer?["claims"] as? [String: Any]
                #expect(claims?["scope"] as? String == "orders:read" && claims?["client_id"] as? String == id, "\(got)")
                let refused = try await Self.python(["ops/lib/oauth-client.py", base, id, "oc_wrong"])
                #expect(refused.contains(#""error": "invalid_client""#), "\(refused)")
            }
        }
    }

    /// The test environment's Python running `arguments` (a script of the project's and its
    /// arguments), off the cooperative pool so that the server answers meanwhile; its output.
    static func python(_ arguments: [String]) async throws -> String {
        let argv =
            [try TestPython.path.get(), projectRoot.appendingPathComponent(arguments[0]).path] + arguments.dropFirst()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try ChildProcess.run(argv).output }) }
        }
    }

    /// A token request: the form, and an `Authorization: Basic` header if given.
    static func token(
        _ client: any TestClientProtocol, form: String, basic: String? = nil, path: String = "/oauth/token"
    ) async throws -> Reply {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        if let basic { headers[.authorization] = basic }
        return try await client.execute(
            uri: path, method: .post, headers: headers, body: ByteBuffer(string: form)
        ) { response in
            Reply(status: Int(response.status.code), headers: response.headers, text: String(buffer: response.body))
        }
    }
}
