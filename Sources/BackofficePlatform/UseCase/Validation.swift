import Foundation

/// One field's problem in a rejected request.
package struct FieldIssue: Sendable, Codable, Equatable {
    package let field: String
    package let code: String
    package let message: String
    /// The value stored now, when the field named an older one (a price that changed).
    package var current: String? = nil

    package init(field: String, code: String, message: String, current: String? = nil) {
        (self.field, self.code, self.message, self.current) = (field, code, message, current)
    }
}

/// Collects field problems of one request and throws them together (`DomainError.invalid`).
package struct Validation {
    package private(set) var issues: [FieldIssue] = []
    package init() {}

    package mutating func require(_ condition: Bool, _ field: String, _ code: String, _ message: String) {
        if !condition { issues.append(FieldIssue(field: field, code: code, message: message)) }
    }

    /// A required, trimmed, bounded text. Length counts Unicode scalars, as PostgreSQL's
    /// `length()` does in the CHECK constraints, so an accepted value never fails one.
    package mutating func text(_ value: String?, _ field: String, max: Int, required: Bool = true) {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty {
            if required { issues.append(FieldIssue(field: field, code: "required", message: "is required")) }
        } else if trimmed.unicodeScalars.count > max {
            issues.append(FieldIssue(field: field, code: "too_long", message: "must be at most \(max) characters"))
        }
    }

    package mutating func email(_ value: String, _ field: String) {
        require(Self.isMailbox(value), field, "invalid_email", "must be an email address")
    }

    /// Whether `text` is an address SMTP carries as it is in `RCPT TO:<…>` and `To: <…>`: RFC 5321's
    /// Mailbox with a dot-string local part (RFC 5322's atext: letters, digits and
    /// ``!#$%&'*+-/=?^_`{|}~``, dots between them, at most 64) and a domain of letter-digit-hyphen
    /// labels (each 1–63, no hyphen at either end; two or more unless `singleLabel`, as an address a
    /// person gives must be, while a server's own sender may be `backoffice@localhost`), 254 at most
    /// in all. Quoted local parts, address literals and non-ASCII addresses are refused: so are `<`,
    /// `>`, `,`, spaces, tabs and line breaks, which could end the address early in a command or a
    /// header.
    package static func isMailbox(_ text: String, singleLabel: Bool = false) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 254, let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return false }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        let atext = Set("!#$%&'*+-/=?^_`{|}~".utf8)
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        let atoms = local.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...64).contains(local.count),
            atoms.allSatisfy({ !$0.isEmpty && $0.allSatisfy { isAlphanumeric($0) || atext.contains($0) } })
        else { return false }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.count >= (singleLabel ? 1 : 2)
            && labels.allSatisfy { label in
                (1...63).contains(label.count) && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                    && label.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
            }
    }

    /// Whether `text` is a slug: 2–63 lower-case letters, digits or dashes, starting with a letter
    /// or digit (tenants, content policies, badges; the same CHECK in the database).
    package static func isSlug(_ text: String) -> Bool {
        matches(text, length: 2...63) { index, byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (index > 0 && byte == UInt8(ascii: "-"))
        }
    }

    /// Whether `text` is `length` ASCII bytes each of which `allowed` (given its position) accepts:
    /// the character-class patterns of the CHECK constraints, without a regular expression.
    package static func matches(_ text: String, length: ClosedRange<Int>, _ allowed: (Int, UInt8) -> Bool) -> Bool {
        let utf8 = text.utf8
        guard length.contains(utf8.count) else { return false }
        for (index, byte) in utf8.enumerated() where !allowed(index, byte) { return false }
        return true
    }

    /// `value` as a whole number within `range`; otherwise records `code` on `field` and returns nil
    /// (numbers arrive as JSON numbers, so 1.5 and 1e300 are refused here, not by the decoder).
    package mutating func wholeNumber(_ value: Double?, _ field: String, code: String, in range: ClosedRange<Int64>)
        -> Int64?
    {
        guard let value, value.isFinite, value == value.rounded(), value >= Double(range.lowerBound),
            value <= Double(range.upperBound)
        else {
            require(
                false, field, code,
                "must be a whole number from \(Self.grouped(range.lowerBound)) to \(Self.grouped(range.upperBound))")
            return nil
        }
        return Int64(value)
    }

    /// 1000000 → "1,000,000", as the messages write numbers.
    package static func grouped(_ number: Int64) -> String {
        let digits = Array(String(number.magnitude))
        let groups = stride(from: digits.count, to: 0, by: -3).map { String(digits[max(0, $0 - 3)..<$0]) }.reversed()
        return (number < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    package func check() throws {
        if !issues.isEmpty { throw DomainError.invalid(issues) }
    }
}

/// The trimmed reason a change must give (audited with it); 422 `validation_failed` when missing
/// or longer than 1,000 characters.
package func requireReason(_ reason: String?) throws -> String {
    var validation = Validation()
    validation.text(reason, "reason", max: 1000)
    try validation.check()
    return (reason ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
}
