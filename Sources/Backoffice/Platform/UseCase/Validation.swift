import Foundation

/// One field's problem in a rejected request.
public struct FieldIssue: Sendable, Codable, Equatable {
    public let field: String
    public let code: String
    public let message: String

    public init(field: String, code: String, message: String) {
        self.field = field
        self.code = code
        self.message = message
    }
}

/// Collects field problems of one request and throws them together (`DomainError.invalid`).
public struct Validation {
    public private(set) var issues: [FieldIssue] = []
    public init() {}

    public mutating func require(_ condition: Bool, _ field: String, _ code: String, _ message: String) {
        if !condition { issues.append(FieldIssue(field: field, code: code, message: message)) }
    }

    /// A required, trimmed, bounded text. Length counts Unicode scalars, as PostgreSQL's
    /// `length()` does in the CHECK constraints, so an accepted value never fails one.
    public mutating func text(_ value: String?, _ field: String, max: Int, required: Bool = true) {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty {
            if required { issues.append(FieldIssue(field: field, code: "required", message: "is required")) }
        } else if trimmed.unicodeScalars.count > max {
            issues.append(FieldIssue(field: field, code: "too_long", message: "must be at most \(max) characters"))
        }
    }

    public mutating func email(_ value: String, _ field: String) {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        let ok =
            parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !value.contains(" ")
            && (3...254).contains(value.unicodeScalars.count)
        require(ok, field, "invalid_email", "must be an email address")
    }

    public func check() throws {
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
