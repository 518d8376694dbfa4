import BackofficePlatform
import Foundation
import Hummingbird

/// The OAuth documents anyone may read: the signing keys (`/.well-known/jwks.json`, RFC 7517), by
/// which another service checks an access token offline, and the server's metadata
/// (`/.well-known/oauth-authorization-server`, RFC 8414).
struct OAuthDocuments: Sendable {
    let tokens: AccessTokens
    let database: Database
    let scopes: [String]

    func register(on router: Router<AppRequestContext>) {
        router.get("/.well-known/jwks.json") { [tokens, database] _, _ in
            // Read afresh: a key signs from the moment it is rotated in, so it is published from then.
            try Self.json(["keys": tokens.jwks(try await SigningKeyGenerations.read(database))], maxAge: 60)
        }
        router.get("/.well-known/oauth-authorization-server") { [tokens, scopes] _, _ in
            try Self.json(
                [
                    "issuer": tokens.issuer, "token_endpoint": tokens.issuer + "/oauth/token",
                    "jwks_uri": tokens.issuer + "/.well-known/jwks.json",
                    "grant_types_supported": ["client_credentials"],
                    "revocation_endpoint": tokens.issuer + "/oauth/revoke",
                    "introspection_endpoint": tokens.issuer + "/oauth/introspect",
                    "token_endpoint_auth_methods_supported": [
                        "client_secret_basic", "client_secret_post", "private_key_jwt",
                    ],
                    "token_endpoint_auth_signing_alg_values_supported": ["EdDSA"],
                    "response_types_supported": [String](), "scopes_supported": scopes,
                ] as [String: any Sendable], maxAge: 300)
        }
    }

    private static func json(_ document: [String: any Sendable], maxAge: Int) throws -> Response {
        let data = try JSONSerialization.data(
            withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=\(maxAge)"],
            body: .init(byteBuffer: ByteBuffer(data: data)))
    }
}
