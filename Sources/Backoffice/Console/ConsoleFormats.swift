import Foundation

/// Money as the console shows and reads it: US dollars with cents.
enum Money {
    /// `1250` → `$12.50`.
    static func dollars(_ cents: Int64) -> String { "$" + plain(cents) }

    /// `1250` → `12.50`, as a form field holds it.
    static func plain(_ cents: Int64) -> String { "\(cents / 100).\(String(format: "%02d", abs(cents % 100)))" }

    /// `12.50`, `$12.5`, `12` → cents; nil for anything else (negative, more than two decimals, not a number).
    static func cents(_ text: String) -> Int64? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("$") { text.removeFirst() }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit), whole.count <= 12, let dollars = Int64(whole) else {
            return nil
        }
        guard parts.count == 2 else { return dollars * 100 }
        let fraction = parts[1]
        guard (1...2).contains(fraction.count), fraction.allSatisfy(\.isASCIIDigit), let value = Int64(fraction) else { return nil }
        return dollars * 100 + (fraction.count == 1 ? value * 10 : value)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Times as the console shows them: UTC in the page (the browser's script shows the operator's
/// own zone, with UTC on hover).
enum ConsoleTime {
    static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// An `<option>` of a `<select>`.
struct ConsoleOption {
    let value: String
    let label: String
    let selected: Bool

    /// `values` as options, `selected` marked, with a first "any" option of value "" when `any` is given.
    static func all(_ values: [String], selected: String?, any: String? = nil) -> [ConsoleOption] {
        (any.map { [ConsoleOption(value: "", label: $0, selected: selected == nil)] } ?? [])
            + values.map { ConsoleOption(value: $0, label: $0.capitalized, selected: $0 == selected) }
    }
}

/// Console links with query strings.
enum ConsoleLinks {
    /// `path` with the non-nil `query` items, percent-encoded, in key order.
    static func path(_ path: String, _ query: [String: String?]) -> String {
        var components = URLComponents()
        components.path = path
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }.sorted { $0.name < $1.name }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? path
    }
}
