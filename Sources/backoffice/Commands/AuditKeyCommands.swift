import ArgumentParser
import Backoffice
import BackofficePlatform
import Foundation

extension Audit {
    struct Keygen: AsyncParsableCommand {
        @Option(help: "Where to write the private key (must not exist).") var privateKey: String
        @Option(help: "Where to write the public key (give it to whoever verifies).") var publicKey: String

        func run() async throws {
            try await runCommand {
                do { _ = try AuditSigningKey.generate(privateKeyFile: privateKey, publicKeyFile: publicKey) } catch {
                    throw CLIFailure(message: "error: \(error)", exitCode: 6)
                }
                print("private key \(privateKey) (keep it offline), public key \(publicKey)")
            }
        }
    }
}

extension Audit {
    struct SignFile: AsyncParsableCommand {
        @Argument(help: "The file to sign.") var file: String
        @Option(help: "Ed25519 private key file to sign with (env BACKOFFICE_AUDIT_SIGNING_KEY).") var signingKey:
            String?
        @Option(help: "Where to write the signature (default: FILE.sig).") var signature: String?

        func run() async throws {
            try await runCommand {
                guard let keyFile = signingKeyFile(signingKey) else {
                    throw CLIFailure(
                        message: "error: --signing-key (or BACKOFFICE_AUDIT_SIGNING_KEY) is required", exitCode: 64)
                }
                let key = try loadSigningKey(keyFile)
                let contents = try readWhole(file)
                let out = signature ?? file + ".sig"
                try Data(try FileSignature.sign(contents, with: key).utf8).write(to: URL(fileURLWithPath: out))
                print("signed \(file): \(out)")
            }
        }
    }

    struct VerifyFile: AsyncParsableCommand {
        @Argument(help: "The signed file.") var file: String
        @Option(help: "The signer's public key (from `audit keygen`).") var publicKey: String
        @Option(help: "The signature (default: FILE.sig).") var signature: String?

        func run() async throws {
            try await runCommand {
                let key = try loadPublicKey(publicKey)
                let signatureFile = signature ?? file + ".sig"
                let signed = String(decoding: try readWhole(signatureFile), as: UTF8.self)
                guard FileSignature.isValid(signed, of: try readWhole(file), publicKey: key) else {
                    throw CLIFailure(
                        message: "REFUSED: \(signatureFile) is not \(publicKey)'s signature of \(file)", exitCode: 8)
                }
                print("\(file): signature good (\(publicKey))")
            }
        }
    }
}

/// The checkpoint signing key's file: the option, else `BACKOFFICE_AUDIT_SIGNING_KEY`.
func signingKeyFile(_ option: String?) -> String? {
    option ?? ProcessInfo.processInfo.environment["BACKOFFICE_AUDIT_SIGNING_KEY"]
}

/// The public key in `file`; an unreadable key stops the command with exit code 6.
func loadPublicKey(_ file: String) throws -> AuditPublicKey {
    do { return try AuditSigningKey.publicKey(file: file) } catch {
        throw CLIFailure(message: "error: \(error)", exitCode: 6)
    }
}

/// The signing key in `file`; an unreadable key stops the command with exit code 6.
func loadSigningKey(_ file: String) throws -> AuditPrivateKey {
    do { return try AuditSigningKey.privateKey(file: file) } catch {
        throw CLIFailure(message: "error: \(error)", exitCode: 6)
    }
}

/// A whole file's bytes; a missing or unreadable file stops the command (exit 6).
func readWhole(_ file: String) throws -> Data {
    guard let data = FileManager.default.contents(atPath: file) else {
        throw CLIFailure(message: "error: cannot read \(file)", exitCode: 6)
    }
    return data
}
