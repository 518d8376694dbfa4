import BackofficePlatform
import Foundation

/// Money as the console shows and reads it: US dollars with cents.
package enum Money {
    /// `1250` → `$12.50`, `123456789` → `$1,234,567.89`, `-5` → `-$0.05`: thousands separated, as a
    /// page shows money (a form field holds `plain`).
    package static func dollars(_ cents: Int64) -> String {
        let fraction = cents.magnitude % 100
        let dollars = Figures.grouped(magnitude: UInt(cents.magnitude / 100))
        return "\(cents < 0 ? "-" : "")$\(dollars).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// `1250` → `12.50`, `-5` → `-0.05`, as a form field holds it.
    package static func plain(_ cents: Int64) -> String {
        let fraction = cents.magnitude % 100
        return "\(cents < 0 ? "-" : "")\(cents.magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// `12.50`, `$12.5`, `12` → cents; nil for anything else (negative, more than two decimals, not a number).
    package static func cents(_ text: String) -> Int64? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("$") { text.removeFirst() }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit), whole.count <= 12,
            let dollars = Int64(whole)
        else {
            return nil
        }
        guard parts.count == 2 else { return dollars * 100 }
        let fraction = parts[1]
        guard (1...2).contains(fraction.count), fraction.allSatisfy(\.isASCIIDigit), let value = Int64(fraction) else {
            return nil
        }
        return dollars * 100 + (fraction.count == 1 ? value * 10 : value)
    }

    /// A form's amount in dollars (`cents(_:)`) as cents.
    /// - Throws: 422 on `field` for anything `cents(_:)` does not read.
    package static func cents(_ text: String, field: String) throws -> Int64 {
        guard let cents = cents(text) else {
            throw DomainError.invalid([
                FieldIssue(field: field, code: "invalid", message: "an amount in dollars, such as 4.50")
            ])
        }
        return cents
    }
}

/// An `<option>` of a `<select>`.
package struct ConsoleOption: TemplateValues {
    package let value: String
    package let label: String
    package let selected: Bool

    /// An option of `value`, shown as `label`, chosen when `selected`.
    package static func choice(value: String, label: String, selected: Bool) -> ConsoleOption {
        ConsoleOption(value: value, label: label, selected: selected)
    }

    package var templateValues: [(String, Any)] { [("value", value), ("label", label), ("selected", selected)] }

    /// `values` as options, `selected` marked, with a first "any" option of value "" when `any` is given.
    package static func all(_ values: [String], selected: String?, any: String? = nil) -> [ConsoleOption] {
        (any.map { [ConsoleOption(value: "", label: $0, selected: selected == nil)] } ?? [])
            + values.map { ConsoleOption(value: $0, label: $0.capitalized, selected: $0 == selected) }
    }
}

/// Console links with query strings.
package enum ConsoleLinks {
    /// The smallest id: where a list paged by id starts.
    package static let firstID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// `path` with the non-nil `query` items, percent-encoded, in key order.
    package static func path(_ path: String, _ query: [String: String?]) -> String {
        var components = URLComponents()
        components.path = path
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }.sorted {
            $0.name < $1.name
        }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? path
    }
}

/// A refused change as a form shows it: the messages by field (`errors.<field>` in a template),
/// one for the form as a whole (`general`), and whether there are any (`hasErrors`).
package struct FormRefusal {
    package private(set) var byField: [String: String] = [:]
    package private(set) var general: String?
    package let isEmpty: Bool

    package init(_ issues: [FieldIssue]) {
        for issue in issues { byField[issue.field] = (byField[issue.field].map { $0 + " " } ?? "") + issue.message }
        general = byField.removeValue(forKey: "")
        isEmpty = issues.isEmpty
    }

    /// The values a template reads: `errors`, `general`, `hasErrors`.
    package func add(to data: inout [String: Any]) {
        data["errors"] = byField
        data["hasErrors"] = !isEmpty
        if let general { data["general"] = general }
    }

    /// What a stale form says when the form has nothing more precise to say.
    package static let changed = "Someone changed this after you opened it: reload to see what changed."

    /// `issues` with these arguments, as `ConsoleRequest.submit(reading:)` takes it.
    package static func reading(
        fieldNames: [String: String] = [:], conflictFields: [String: String] = [:],
        changed: String = FormRefusal.changed
    ) -> (DomainError) throws -> [FieldIssue] {
        { try issues($0, fieldNames: fieldNames, conflictFields: conflictFields, changed: changed) }
    }

    /// `refusal` as issues next to the form's fields (field "" for the form as a whole):
    /// `fieldNames` renames the use case's fields to the form's, `conflictFields` puts a
    /// conflict's code next to a field, `changed` is said of an `If-Match` conflict. Not found,
    /// not allowed and server errors are rethrown, for their error page.
    package static func issues(
        _ refusal: DomainError, fieldNames: [String: String] = [:], conflictFields: [String: String] = [:],
        changed: String = FormRefusal.changed
    ) throws -> [FieldIssue] {
        switch refusal {
        case .invalid(let issues):
            return issues.map {
                FieldIssue(field: fieldNames[$0.field] ?? $0.field, code: $0.code, message: $0.message)
            }
        case .versionMismatch:
            return [FieldIssue(field: "", code: "changed", message: changed)]
        case .invalidTransition(let detail, let current):
            return [
                FieldIssue(
                    field: "", code: "invalid_transition", message: "\(detail) It is \(current) now: reload to see it.")
            ]
        case .conflict(let code, let detail):
            return [FieldIssue(field: conflictFields[code] ?? "", code: code, message: detail)]
        case .unprocessable(let code, let detail, let issues):
            return [FieldIssue(field: "", code: code, message: detail)] + issues
        default:
            throw refusal
        }
    }
}

extension UTCDay {
    /// The console's audit log for this day (its first instant to the next day's), of `action`
    /// only when given: the list behind a chart's day. The instants are written from the days'
    /// own text, so a home's links cost no date formatting.
    package func auditLog(action: String? = nil) -> String {
        ConsoleLinks.path(
            "/console/audit", ["since": "\(self)T00:00:00Z", "until": "\(advanced(by: 1))T00:00:00Z", "action": action])
    }
}
