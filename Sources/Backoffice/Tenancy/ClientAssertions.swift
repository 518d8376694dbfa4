import BackofficePlatform
import Crypto
import Foundation
import PostgresNIO

/// A client's Ed25519 public keys (RFC 8037's `OKP` JWKs, `crv` `Ed25519`), each known by its `x`:
/// the key's 32 bytes in base64url. A client registered with one or two authenticates with signed
/// assertions (`private_key_jwt`) and has no secret; two let it roll its own key over.
enum ClientPublicKey {
    /// The keys as stored, each checked to be an Ed25519 public key (its issue recorded under
    /// `public_keys[i]` otherwise); one or two keys, no repeat.
    static func validated(_ keys: [String], _ validation: inout Validation) -> [String] {
        validation.require(
            (1...2).contains(keys.count), "public_keys", "out_of_range", "must hold one or two Ed25519 keys")
        validation.require(Set(keys).count == keys.count, "public_keys", "repeated", "names a key twice")
        for (index, key) in keys.enumerated() {
            validation.require(
                Self.key(key) != nil, "public_keys[\(index)]", "invalid_key",
                "must be an Ed25519 public key: its 32 bytes in base64url (a JWK's x)")
        }
        return keys
    }

    /// The key `x` encodes, when it is one.
    static func key(_ x: String) -> Curve25519.Signing.PublicKey? {
        guard x.utf8.count == 43, let raw = Base64URL.decode(x), raw.count == 32 else { return nil }
        return try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
    }
}

/// A client's signed assertion (`private_key_jwt`, RFC 7523 §2.2 and §3): a compact JWS the client
/// signs with its private key, `alg` `EdDSA`, with `iss` and `sub` its client id, `aud` the token
/// endpoint (or the issuer), an `exp` ahead and at most an hour away (RFC 7523's clients commonly
/// sign for an hour; a minute's leeway for clocks), and a `jti` never used before by this client.
///
/// Guarantees: anything else is `invalid_client`, told apart by no message (a caller learns
/// nothing about which check failed); a `jti` is recorded in the token request's transaction, so
/// of two requests with one assertion, at once or later, one succeeds.
enum ClientAssertion {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The longest an assertion may be valid for (its `jti` is kept that long).
    static let longest: TimeInterval = 61 * 60

    private struct Header: Decodable { let alg: String }
    private struct Claims: Decodable {
        let iss: String, sub: String, exp: Double, jti: String
        let aud: Audience
    }
    /// `aud`: one string or an array of them (RFC 7519 §4.1.3).
    private struct Audience: Decodable {
        let values: [String]
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let many = try? container.decode([String].self) {
                values = many
            } else {
                values = [try container.decode(String.self)]
            }
        }
    }

    /// The registered, unrevoked, key-holding client the assertion names and proves, called from
    /// one of its networks; its `jti` recorded.
    static func authenticate(
        _ assertion: String, clientID: String?, issuer: String, in unit: UnitOfWork
    ) async throws -> OAuthClient {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard assertion.utf8.count <= 4096, parts.count == 3,
            let header = Base64URL.decode(String(parts[0])).flatMap({ try? JSONDecoder().decode(Header.self, from: $0) }
            ),
            header.alg == "EdDSA",
            let claims = Base64URL.decode(String(parts[1])).flatMap({ try? JSONDecoder().decode(Claims.self, from: $0) }
            ),
            claims.iss == claims.sub, clientID == nil || clientID == claims.iss,
            claims.aud.values.contains(where: { [issuer, issuer + "/oauth/token"].contains($0) }),
            claims.exp > unit.now.timeIntervalSince1970,
            claims.exp <= unit.now.timeIntervalSince1970 + longest,
            (1...200).contains(claims.jti.utf8.count),
            let id = UUID(uuidString: claims.iss),
            let signature = Base64URL.decode(String(parts[2]))
        else { throw OAuthRefusal.invalidClient }
        let client = try await ClientCredentials.activeClient(id, in: unit)
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard let client, let keys = client.publicKeys,
            keys.contains(where: { ClientPublicKey.key($0)?.isValidSignature(signature, for: signed) == true })
        else { throw OAuthRefusal.invalidClient }
        let fresh = try await unit.first(
            """
            INSERT INTO oauth_client_assertions (tenant_id, client_id, jti, expires_at)
            VALUES (\(client.tenantID), \(client.id), \(claims.jti), \(Date(timeIntervalSince1970: claims.exp)))
            ON CONFLICT DO NOTHING RETURNING 1
            """, { _ in true })
        guard fresh == true else { throw OAuthRefusal.invalidClient }
        return client
    }
}
