import Crypto
import Foundation

/// OAuth 2.0 access tokens (RFC 9068's JWT profile): compact JWS signed with Ed25519 (`EdDSA`),
/// `typ: at+jwt`, with `iss`, `sub` (the client's operator), `aud`, `client_id`, `scope`, `jti`
/// (the token's id), `iat` and `exp`.
///
/// Guarantees: `verify` accepts only `alg: EdDSA` under a key id this service signs with, a
/// signature that holds, the service's own issuer and audience, and an `exp` still ahead; any
/// other text is refused before the database is asked. A verified token still authenticates only
/// if the database holds its hash unrevoked (`authenticate_request`): the signature lets a caller
/// be refused early and lets other services check a token offline (`/.well-known/jwks.json`),
/// and never stands in for the database's word.
///
/// The signing keys are derived from the server's key (`BACKOFFICE_SECOND_FACTOR_KEY`), one per
/// generation (`kid` `g<n>`), so every server of a cluster signs and verifies alike and no private
/// key is stored anywhere. Which generations are live is the database's (`SigningKeyGenerations`).
package struct AccessTokens: Sendable {
    /// How long an access token lives.
    package static let lifetime: TimeInterval = 15 * 60
    package let issuer: String
    package let audience: String
    private let key: SymmetricKey

    /// - Parameters:
    ///   - issuer: the service's public URL (`iss`); the audience is its API (`<issuer>/v1`).
    ///   - key: the server's key the signing keys are derived from.
    package init(issuer: String, key: SymmetricKey) {
        self.issuer = issuer
        self.audience = issuer + "/v1"
        self.key = key
    }

    /// The private key of `generation`.
    private func signingKey(_ generation: Int) -> Curve25519.Signing.PrivateKey {
        let seed = HMAC<SHA256>.authenticationCode(for: Data("oauth-access-token-key:\(generation)".utf8), using: key)
        // A 32-byte seed is always a valid Ed25519 private key.
        return try! Curve25519.Signing.PrivateKey(rawRepresentation: Data(seed))
    }

    /// The public keys of `generations` as a JWK Set's keys (RFC 7517).
    package func jwks(_ generations: [Int]) -> [[String: String]] {
        generations.map { generation in
            [
                "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": "g\(generation)",
                "x": Base64URL.encode(signingKey(generation).publicKey.rawRepresentation),
            ]
        }
    }

    /// A signed access token for `claims`, with `generation`'s key (the current one).
    package func sign(_ claims: Claims, generation: Int) throws -> String {
        let header = #"{"alg":"EdDSA","kid":"g\#(generation)","typ":"at+jwt"}"#
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try signingKey(generation).signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// The key generation a token names (its `kid`), before any check; nil when it names none.
    package static func generation(of token: String) -> Int? {
        guard let end = token.firstIndex(of: "."), let data = Base64URL.decode(String(token[..<end])),
            let header = try? JSONDecoder().decode(Header.self, from: data), header.kid.hasPrefix("g")
        else { return nil }
        return Int(header.kid.dropFirst())
    }

    /// The claims of a token this service signed with one of the live `generations` that is valid
    /// at `now`; nil for anything else.
    package func verify(_ token: String, at now: Date, generations: [Int]) -> Claims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 4096, parts.count == 3,
            let headerData = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            header.alg == "EdDSA", header.kid.hasPrefix("g"),
            let generation = Int(header.kid.dropFirst()), generations.contains(generation),
            let signature = Base64URL.decode(String(parts[2])),
            signingKey(generation).publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)),
            let payload = Base64URL.decode(String(parts[1])),
            let claims = try? JSONDecoder().decode(Claims.self, from: payload),
            claims.iss == issuer, claims.aud == audience, Double(claims.exp) > now.timeIntervalSince1970
        else { return nil }
        return claims
    }

    /// Whether the text has a JWT's shape (three base64url parts), before any check.
    package static func looksLikeJWT(_ text: String) -> Bool {
        text.utf8.count <= 4096 && text.split(separator: ".", omittingEmptySubsequences: false).count == 3
            && text.utf8.allSatisfy { $0 == UInt8(ascii: ".") || Base64URL.isAlphabet($0) }
    }

    private struct Header: Decodable {
        let alg: String
        let kid: String
    }

    /// An access token's claims.
    package struct Claims: Codable, Sendable, Equatable {
        package let iss: String
        package let sub: String
        package let aud: String
        package let client_id: String
        package let scope: String
        package let jti: String
        package let iat: Int
        package let exp: Int

        package init(
            issuer: String, audience: String, operatorID: UUID, clientID: UUID, scopes: [String], tokenID: UUID,
            issuedAt: Date
        ) {
            (iss, aud, sub, client_id) = (issuer, audience, operatorID.text, clientID.text)
            scope = scopes.joined(separator: " ")
            jti = tokenID.text
            iat = Int(issuedAt.timeIntervalSince1970)
            exp = iat + Int(AccessTokens.lifetime)
        }
    }
}
