import Foundation

/// One field's problem in a rejected request.
package struct FieldIssue: Sendable, Codable, Equatable {
    package let field: String
    package let code: String
    package let message: String
    /// The value stored now, when the field named an older one (a price that changed).
    package var current: String? = nil

    package init(field: String, code: String, message: String, current: String? = nil) {
        self.field = field
        self.code = code
        self.message = message
        self.current = current
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
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        let ok =
            parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !value.contains(" ")
            && (3...254).contains(value.unicodeScalars.count)
        require(ok, field, "invalid_email", "must be an email address")
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
    static func grouped(_ number: Int64) -> String {
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
func requireReason(_ reason: String?) throws -> String {
    var validation = Validation()
    validation.text(reason, "reason", max: 1000)
    try validation.check()
    return (reason ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
}
