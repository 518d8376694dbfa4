import Crypto
import Foundation
import BackofficePlatform

/// A checkpoint file (`audit checkpoint`): every chain's head at a moment, signed with the
/// operator's Ed25519 key, which never enters the database. Kept outside the service, it lets
/// anyone holding the public key detect a log that was cut short or rewritten afterwards, without
/// trusting the server.
package struct AuditCheckpoint: Codable, Sendable, Equatable {
    package struct Signature: Codable, Sendable, Equatable {
        package var algorithm: String
        /// The signer's public key (raw, base64): which key signed, not a reason to trust it.
        package var publicKey: String
        /// The Ed25519 signature (base64) over `AuditCheckpoint.message`.
        package var value: String

        enum CodingKeys: String, CodingKey { case algorithm, publicKey = "public_key", value }
    }

    package var takenAt: String
    package var heads: [ChainHead]
    package var signature: Signature?

    enum CodingKeys: String, CodingKey { case takenAt = "taken_at", heads, signature }

    package init(takenAt: String, heads: [ChainHead], signature: Signature? = nil) {
        self.takenAt = takenAt
        self.heads = heads
        self.signature = signature
    }

    /// The exact bytes signed: a versioned line, the time, then `chain seq hash` per head, by chain.
    package var message: Data {
        var text = "healthtrack-audit-checkpoint/v1\n\(takenAt)\n"
        for head in heads.sorted(by: { $0.chain < $1.chain }) { text += "\(head.chain) \(head.seq) \(head.hash)\n" }
        return Data(text.utf8)
    }

    /// The checkpoint signed with `key`.
    package func signed(with key: Curve25519.Signing.PrivateKey) throws -> AuditCheckpoint {
        var copy = self
        copy.signature = Signature(
            algorithm: "ed25519", publicKey: key.publicKey.rawRepresentation.base64EncodedString(),
            value: try key.signature(for: message).base64EncodedString())
        return copy
    }

    /// Writes the checkpoint as pretty, key-sorted JSON.
    package func write(to file: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(self).write(to: URL(fileURLWithPath: file))
    }

    /// Why the checkpoint cannot be trusted under `publicKey`, nil when its signature is valid.
    package func signatureProblem(publicKey: Curve25519.Signing.PublicKey) -> String? {
        guard let signature else { return "the checkpoint is not signed" }
        guard signature.algorithm == "ed25519", let value = Data(base64Encoded: signature.value) else {
            return "the checkpoint's signature is not an Ed25519 signature"
        }
        guard publicKey.isValidSignature(value, for: message) else {
            return
                """
                    the checkpoint's signature does not verify with the given public key: it was altered or signed by \
                    another key
                    """
        }
        return nil
    }
}

/// The key that signs checkpoints, and the one that verifies them.
package typealias AuditPrivateKey = Curve25519.Signing.PrivateKey
package typealias AuditPublicKey = Curve25519.Signing.PublicKey

/// Ed25519 key files for checkpoints: one line of base64 (the raw key). The private key file is
/// created new and private (0600) from its first byte, and kept by the operator.
package enum AuditSigningKey {
    package struct Unreadable: Error, CustomStringConvertible {
        package let description: String
    }

    /// Writes a new key pair; refuses to overwrite an existing private key.
    package static func generate(privateKeyFile: String, publicKeyFile: String) throws -> Curve25519.Signing.PublicKey {
        let key = Curve25519.Signing.PrivateKey()
        try PrivateFile.create(
            privateKeyFile, contents: Data((key.rawRepresentation.base64EncodedString() + "\n").utf8))
        try Data((key.publicKey.rawRepresentation.base64EncodedString() + "\n").utf8).write(
            to: URL(fileURLWithPath: publicKeyFile))
        return key.publicKey
    }

    package static func privateKey(file: String) throws -> Curve25519.Signing.PrivateKey {
        try Curve25519.Signing.PrivateKey(rawRepresentation: try raw(file, what: "private key"))
    }

    package static func publicKey(file: String) throws -> Curve25519.Signing.PublicKey {
        try Curve25519.Signing.PublicKey(rawRepresentation: try raw(file, what: "public key"))
    }

    private static func raw(_ file: String, what: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: file),
            let bytes = Data(
                base64Encoded: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            bytes.count == 32
        else { throw Unreadable(description: "\(file) is not an Ed25519 \(what) written by `backoffice audit keygen`") }
        return bytes
    }
}

/// A detached Ed25519 signature over a whole file (a backup's `SHA256SUMS`), made with the audit
/// key. What is signed is a fixed context line followed by the file's bytes, so a file signature
/// can never pass as a checkpoint's, nor the other way round. The signature file holds the
/// signature in base64 on one line.
package enum FileSignature {
    static let context = Data("healthtrack-backoffice signed file v1\n".utf8)

    /// The signature file's text for `contents`.
    package static func sign(_ contents: Data, with key: AuditPrivateKey) throws -> String {
        try key.signature(for: context + contents).base64EncodedString() + "\n"
    }

    /// Whether `signature` (a signature file's text) is `publicKey`'s over `contents`.
    package static func isValid(_ signature: String, of contents: Data, publicKey: AuditPublicKey) -> Bool {
        guard let bytes = Data(base64Encoded: signature.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            return false
        }
        return publicKey.isValidSignature(bytes, for: context + contents)
    }
}
