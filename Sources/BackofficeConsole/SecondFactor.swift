import BackofficePlatform
import Crypto
import ExtrasBase64
import Foundation
import HummingbirdOTP

/// An operator's TOTP secret (RFC 6238: six digits, 30-second steps, HMAC-SHA1, as every
/// authenticator app expects). It exists in the clear only in memory, on the enrolment page (QR
/// code and text) and in `dev`'s credentials file; the database keeps it sealed (`SecondFactorKey`).
package struct TOTPSecret: Sendable, Equatable {
    /// The HMAC key's text: 20 characters of base64url (120 random bits).
    package let text: String

    /// A new secret from the system's cryptographic random source.
    package static func generate() -> TOTPSecret { TOTPSecret(text: Base64URL.random(bytes: 15)) }

    package init(text: String) { self.text = text }

    /// The secret as authenticator apps take it: base32 of the key's bytes, no padding.
    package var base32: String { String(base32Encoding: text.utf8, options: .omitPaddingCharacter) }

    /// The secret that `base32` names (spaces and case ignored); nil when it is not base32.
    package init?(base32: String) {
        let cleaned = base32.uppercased().filter { !$0.isWhitespace && $0 != "=" }
        guard !cleaned.isEmpty, let bytes = try? cleaned.base32decoded(),
            let text = String(validating: bytes, as: UTF8.self)
        else { return nil }
        self.text = text
    }

    /// The 30-second step `date` falls in.
    package static func step(at date: Date) -> Int64 { Int64(date.timeIntervalSince1970 / 30) }

    /// The six-digit code of `date`'s step.
    package func code(at date: Date) -> String {
        let value = TOTP(secret: text).compute(date: date)
        let digits = String(value)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// The step whose code `code` is, looking one step either side of `now` (a phone's clock may
    /// be a little off); nil when it matches none.
    package func matchingStep(_ typedCode: String, now: Date) -> Int64? {
        let typed = typedCode.filter { !$0.isWhitespace }
        guard typed.count == 6, typed.allSatisfy(\.isASCII), typed.allSatisfy(\.isNumber) else { return nil }
        let current = Self.step(at: now)
        for step in [current, current - 1, current + 1]
        where code(at: Date(timeIntervalSince1970: Double(step) * 30)) == typed {
            return step
        }
        return nil
    }

    /// The `otpauth://` link an authenticator app reads (from the QR code).
    package func uri(account: String, issuer: String = "HealthTrack Back Office") -> String {
        TOTP(secret: text).createAuthenticatorURL(label: "\(issuer):\(account)", issuer: issuer)
    }
}

/// The key that seals TOTP secrets at rest: AES-256-GCM, bound to the operator's id (a sealed
/// secret copied to another operator does not open). From configuration
/// (`BACKOFFICE_SECOND_FACTOR_KEY`), never from the repository or the database.
package struct SecondFactorKey: Sendable {
    package let key: SymmetricKey

    package struct Invalid: Error, CustomStringConvertible {
        package let description =
            "the second-factor key must be 32 random bytes in base64 (e.g. `openssl rand -base64 32`)"
    }

    /// The key whose base64 (or base64url) text is `text`.
    package init(base64 text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: trimmed) ?? Base64URL.decode(trimmed), data.count == 32 else {
            throw Invalid()
        }
        key = SymmetricKey(data: data)
    }

    /// A new random key, with its base64 text (to write to a private file).
    package static func generate() -> (key: SecondFactorKey, text: String) {
        let key = SymmetricKey(size: .bits256)
        let text = key.withUnsafeBytes { Data($0).base64EncodedString() }
        // The text was made from 32 bytes: it always reads back.
        return (try! SecondFactorKey(base64: text), text)
    }

    /// `secret` sealed for `operatorID`.
    package func seal(_ secret: TOTPSecret, for operatorID: UUID) throws -> [UInt8] {
        guard
            let combined = try AES.GCM.seal(
                Data(secret.text.utf8), using: key, authenticating: Self.binding(operatorID)
            ).combined
        else {
            throw DomainError.inconsistent("AES-GCM gave no combined box")
        }
        return Array(combined)
    }

    /// The secret sealed for `operatorID`; throws when it was sealed under another key or for
    /// another operator.
    package func open(_ sealed: [UInt8], for operatorID: UUID) throws -> TOTPSecret {
        let box = try AES.GCM.SealedBox(combined: Data(sealed))
        let bytes = try AES.GCM.open(box, using: key, authenticating: Self.binding(operatorID))
        return TOTPSecret(text: String(decoding: bytes, as: UTF8.self))
    }

    private static func binding(_ operatorID: UUID) -> Data { Data("totp:\(operatorID.text)".utf8) }

    /// A key of its own for `purpose` (HKDF-SHA256 of this key), so the one configured secret
    /// serves several uses without one use's key revealing another's.
    package func derived(for purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(purpose.utf8), outputByteCount: 32)
    }
}

/// One-time recovery codes: ten per enrolment, shown once, stored as SHA-256 of the operator's id
/// and the code. A code is three groups of four lower-case base32 characters (60 random bits).
package enum RecoveryCodes {
    package static let count = 10
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")

    /// `count` new codes.
    package static func generate() -> [String] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            (0..<3).map { _ in String((0..<4).map { _ in alphabet.randomElement(using: &generator)! }) }.joined(
                separator: "-")
        }
    }

    /// Whether `text` has a recovery code's shape (dashes and spaces ignored).
    package static func looksLikeCode(_ text: String) -> Bool { normalized(text).count == 12 }

    /// The stored form of `code` for `operatorID`.
    package static func hash(_ code: String, operatorID: UUID) -> [UInt8] {
        Array(SHA256.hash(data: Data("\(operatorID.text):\(normalized(code))".utf8)))
    }

    private static func normalized(_ text: String) -> String {
        text.lowercased().filter { $0 != "-" && !$0.isWhitespace }
    }
}
