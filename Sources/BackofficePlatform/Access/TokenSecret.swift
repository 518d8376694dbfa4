import Crypto
import Foundation

/// An API token's secret: `bo_` + 32 random bytes in base64url. Shown once; only its SHA-256 is stored.
package struct TokenSecret: Sendable {
    package let value: String

    /// A new secret from the system's cryptographic random source.
    package static func generate() -> TokenSecret {
        TokenSecret(value: "bo_" + Base64URL.random(bytes: 32))
    }

    package init(value: String) { self.value = value }

    /// The stored form: SHA-256 of the secret's bytes.
    package var hash: [UInt8] { Array(SHA256.hash(data: Data(value.utf8))) }

    /// Whether the text has the shape of a token (cheap check before touching the database).
    package var isWellFormed: Bool { value.hasPrefix("bo_") && value.utf8.count == 46 }
}
