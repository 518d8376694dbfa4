import BackofficeAPI
import Crypto
import Foundation
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// OAuth clients that authenticate with a signed assertion (`private_key_jwt`, RFC 7523) instead
/// of a secret: only a fresh, well-addressed assertion its own key signed gets a token.
@Suite("OAuth clients: private_key_jwt")
struct PrivateKeyJWTTests {
    /// A client assertion `key` signs (or `header`'s algorithm claims to).
    static func assertion(
        _ key: Curve25519.Signing.PrivateKey, client: String, subject: String? = nil, audience: String,
        now: Date, expiresIn: TimeInterval = 300, jti: String = UUID().uuidString, alg: String = "EdDSA"
    ) throws -> String {
        let header = Base64URL.encode(Data(#"{"alg":"\#(alg)","typ":"JWT"}"#.utf8))
        let claims: [String: Any] = [
            "iss": client, "sub": subject ?? client, "aud": audience, "jti": jti,
            "iat": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970 + expiresIn),
        ]
        let input = header + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)))
    }

    static func form(_ assertion: String, type: String = ClientAssertion.type) -> String {
        let type = type.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "grant_type=client_credentials&client_assertion_type=\(type)&client_assertion=\(assertion)"
    }

    /// A partner's client registered with `key`'s public key (orders:read): its id.
    static func register(_ client: any TestClientProtocol, _ env: TestEnvironment, _ key: Curve25519.Signing.PrivateKey)
        async throws -> String
    {
        let x = Base64URL.encode(key.publicKey.rawRepresentation)
        let made = try await client.call(
            .post, "/v1/oauth-clients", token: env.fixture.partners[0].adminToken,
            json: #"{"name":"signed sync","role":"partner_staff","scopes":["orders:read"],"public_keys":["\#(x)"]}"#,
            headers: .newIdempotencyKey)
        #expect(made.status == 201, "\(made.text)")
        #expect(made["client_secret"] == nil, "a key client has no secret")
        let registered = try #require(made.json["client"] as? [String: Any])
        #expect(registered["token_endpoint_auth_method"] as? String == "private_key_jwt")
        return try #require(registered["id"] as? String)
    }

    @Test(
        """
        a client registered with its public key gets a token for an assertion it signed; the same assertion again, \
        another key's, alg none, a wrong audience, an expired or a day-long one, iss unlike sub, and any secret \
        are invalid_client; an assertion with Basic, or of another type, is invalid_request; it has no secret to issue
        """
    )
    func assertions() async throws {
        try await TestEnvironment.with { env in
            let key = Curve25519.Signing.PrivateKey()
            try await env.withApp { client in
                let id = try await Self.register(client, env, key)
                let metadata = try await client.call(.get, "/.well-known/oauth-authorization-server", token: nil)
                #expect(metadata.text.contains("private_key_jwt"))
                let endpoint = try #require(metadata["token_endpoint"])
                let now = env.clock.now()
                let signed = try Self.assertion(key, client: id, audience: endpoint, now: now)
                let granted = try await OAuthClientTests.token(client, form: Self.form(signed))
                #expect(granted.status == 200, "\(granted.text)")
                let jwt = try #require(granted["access_token"])
                #expect(try await client.call(.get, "/v1/orders", token: jwt).status == 200)

                let other = Curve25519.Signing.PrivateKey()
                let refused: [(String, String)] = [
                    ("the same assertion again", signed),
                    ("another key's", try Self.assertion(other, client: id, audience: endpoint, now: now)),
                    ("alg none", try Self.assertion(key, client: id, audience: endpoint, now: now, alg: "none")),
                    ("a wrong audience", try Self.assertion(key, client: id, audience: "https://elsewhere", now: now)),
                    (
                        "an expired one",
                        try Self.assertion(key, client: id, audience: endpoint, now: now, expiresIn: -1)
                    ),
                    (
                        "a day-long one",
                        try Self.assertion(key, client: id, audience: endpoint, now: now, expiresIn: 86_400)
                    ),
                    (
                        "iss unlike sub",
                        try Self.assertion(key, client: id, subject: UUID().uuidString, audience: endpoint, now: now)
                    ),
                ]
                for (what, assertion) in refused {
                    let answer = try await OAuthClientTests.token(client, form: Self.form(assertion))
                    #expect((answer.status, answer["code"]) == (401, "invalid_client"), "\(what): \(answer.text)")
                }
                let basic = "Basic " + Data("\(id):oc_guess".utf8).base64EncodedString()
                let secret = try await OAuthClientTests.token(
                    client, form: "grant_type=client_credentials", basic: basic)
                #expect(secret.status == 401, "a key client has no secret")
                #expect(secret.headers[.wwwAuthenticate] == #"Basic realm="oauth""#, "RFC 6749 §5.2's challenge")
                let fresh = try Self.assertion(key, client: id, audience: endpoint, now: now)
                let both = try await OAuthClientTests.token(client, form: Self.form(fresh), basic: basic)
                #expect((both.status, both["code"]) == (400, "invalid_request"), "one method per request")
                let typed = try await OAuthClientTests.token(client, form: Self.form(fresh, type: "urn:other"))
                #expect((typed.status, typed["code"]) == (400, "invalid_request"))
                let issue = try await client.call(
                    .post, "/v1/oauth-clients/\(id)/secret", token: env.fixture.partners[0].adminToken)
                #expect((issue.status, issue["code"]) == (409, "private_key_jwt_client"))
            }
        }
    }

    @Test("30 token requests at once with one assertion: one gets a token, 29 are invalid_client")
    func replayedAtOnce() async throws {
        try await TestEnvironment.with { env in
            let key = Curve25519.Signing.PrivateKey()
            try await env.withApp { client in
                let id = try await Self.register(client, env, key)
                let endpoint = try #require(
                    try await client.call(.get, "/.well-known/oauth-authorization-server", token: nil)["token_endpoint"]
                )
                let form = Self.form(try Self.assertion(key, client: id, audience: endpoint, now: env.clock.now()))
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<30 { group.addTask { try await OAuthClientTests.token(client, form: form).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(
                    statuses.filter { $0 == 200 }.count == 1 && statuses.filter { $0 == 401 }.count == 29, "\(statuses)"
                )
                let kept = "SELECT count(*) FROM oauth_client_assertions"
                #expect(try await env.ownerScalar(kept, as: Int.self) == 1, "its jti, kept until the assertion expires")
                env.clock.advance(by: 301)
                let purged = try await env.database.run(
                    PurgeExpiredData(dryRun: false), context: env.context(.platformAdmin))
                #expect(purged.clientAssertions == 1)
                #expect(try await env.ownerScalar(kept, as: Int.self) == 0, "purged once it can no longer be replayed")
                #expect(purged.accessTokens == 0, "its access token is still live")

                let personal = "SELECT count(*) FROM tokens WHERE client_id IS NULL"
                let admin = env.fixture.principals[.platformAdmin]!
                _ = try await env.database.runAsSystem(
                    CreateToken(operatorID: try #require(admin.operatorID), name: "short", expiresInHours: 1),
                    context: OperationContext.system("test", policies: env.policies))
                let people = try await env.ownerScalar(personal, as: Int.self)
                env.clock.advance(by: 15 * 60 + 2 * 3600)
                let later = try await env.database.run(
                    PurgeExpiredData(dryRun: false), context: env.context(.platformAdmin))
                #expect(later.accessTokens == 1, "the access token, expired over an hour ago")
                #expect(
                    try await env.ownerScalar(personal, as: Int.self) == people,
                    "personal tokens are kept, one expired over an hour ago too")
                let deleted = try await env.database.transaction(for: admin) { connection in
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "DELETE FROM tokens WHERE client_id IS NULL RETURNING 1"),
                        logger: testLogger
                    ).collect().count
                }
                #expect(deleted == 0, "the service's role deletes no personal token, whatever the code does")
            }
        }
    }

    @Test("an independent client (Authlib) signs its own assertion (EdDSA) and gets a token that reads orders")
    func independentClient() async throws {
        try await TestEnvironment.with { env in
            let key = Curve25519.Signing.PrivateKey()
            try await env.withApp(trustedProxies: []) { client in
                let id = try await Self.register(client, env, key)
                let base = "http://127.0.0.1:\(try #require(client.port))"
                let raw = "ed25519:" + Base64URL.encode(key.rawRepresentation)
                let got = try await OAuthClientTests.python(["ops/lib/oauth-client.py", base, id, raw, "orders:read"])
                let answer = try JSONSerialization.jsonObject(with: Data(got.utf8)) as? [String: Any]
                #expect(answer?["token_type"] as? String == "Bearer", "\(got)")
                #expect(answer?["orders_status"] as? Int == 200, "\(got)")
                let wrong = "ed25519:" + Base64URL.encode(Curve25519.Signing.PrivateKey().rawRepresentation)
                let refused = try await OAuthClientTests.python(["ops/lib/oauth-client.py", base, id, wrong])
                #expect(refused.contains("invalid_client"), "\(refused)")
            }
        }
    }
}
