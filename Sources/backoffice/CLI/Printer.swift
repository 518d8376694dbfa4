import Backoffice
import BackofficePlatform
import Foundation

/// Prints command results in the chosen format. Everything goes through the JSON form of the
/// contract's types, so every format shows the same fields.
struct Printer {
    let format: OutputFormat

    /// What a command prints of a success: one resource (its `columns` in a table) or a page.
    enum Layout {
        case single([String])
        case page([String])
        /// A list under `key` with totals beside it (a simulation's lines and its sums).
        case rows(key: String, [String])
    }

    /// Prints `value` in `layout`.
    func show(_ value: some Encodable, as layout: Layout) throws {
        switch layout {
        case .single(let columns): try single(value, columns: columns)
        case .page(let columns): try page(value, columns: columns)
        case .rows(let key, let columns): try rows(value, key: key, columns: columns)
        }
    }

    /// Prints a single resource (`columns` pick the table's fields).
    func single(_ value: some Encodable, columns: [String]) throws {
        let object = try JSON.of(value)
        switch format {
        case .json: try write(value)
        case .jsonl: try writeLine(value)
        case .csv: rows([object], columns: columns)
        case .table:
            guard case .object = object else { return try write(value) }
            let width = columns.map(\.count).max() ?? 0
            for column in columns {
                let cell = SafeText.terminal(Self.cell(object.at(column)))
                if !cell.isEmpty { print(column.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + cell) }
            }
        }
    }

    /// Prints a page `{items, next_cursor}`; on a terminal table, the next cursor goes to stderr.
    func page(_ value: some Encodable, columns: [String]) throws {
        try list(value, key: "items", columns: columns) { object in
            if case .string(let cursor)? = object["next_cursor"] {
                FileHandle.standardError.write(Data("more: --cursor \(cursor)\n".utf8))
            }
        }
    }

    /// Prints the list under `key` as rows and, on a terminal table, the other top-level
    /// scalar fields (totals, as-of time, next cursor) after it.
    func rows(_ value: some Encodable, key: String, columns: [String]) throws {
        try list(value, key: key, columns: columns) { object in
            for (name, field) in object.sorted(by: { $0.key < $1.key }) where name != key {
                if case .array = field { continue }
                print("\(name): \(SafeText.terminal(Self.cell(field)))")
            }
        }
    }

    /// The list under `key` in the chosen format; `after` adds to a terminal table.
    private func list(_ value: some Encodable, key: String, columns: [String], after: ([String: JSON]) -> Void) throws {
        let object = try JSON.of(value).fields
        guard case .array(let items)? = object[key] else { return try write(value) }
        switch format {
        case .json: try write(value)
        case .jsonl:
            for item in items { try writeLine(item) }
        case .csv: rows(items, columns: columns)
        case .table:
            table(items, columns: columns)
            after(object)
        }
    }

    private func rows(_ items: [JSON], columns: [String]) {
        print(columns.joined(separator: ","))
        for item in items {
            print(columns.map { SafeText.csvCell(Self.cell(item.at($0))) }.joined(separator: ","))
        }
    }

    private func table(_ items: [JSON], columns: [String]) {
        let cells = items.map { item in columns.map { SafeText.terminal(Self.cell(item.at($0))) } }
        let widths = columns.indices.map { index in max(columns[index].count, cells.map { $0[index].count }.max() ?? 0)
        }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        print(line(columns.map { $0.uppercased() }))
        for row in cells { print(line(row)) }
    }

    private func write(_ value: some Encodable) throws {
        let encoder = Self.encoder
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    private func writeLine(_ value: some Encodable) throws {
        let encoder = Self.encoder
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(
                date.formatted(
                    .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)))
        }
        return encoder
    }

    static func cell(_ value: JSON?) -> String {
        switch value {
        case nil, .null?: ""
        case .string(let text)?: text
        case .bool(let flag)?: flag ? "true" : "false"
        case .int(let number)?: String(number)
        case .double(let number)?: String(number)
        case .object(let fields)?:
            if case .string(let reason)? = fields["reason"] {
                reason
            } else {
                (try? String(decoding: JSON.compact.encode(value), as: UTF8.self)) ?? ""
            }
        case .array?: (try? String(decoding: JSON.compact.encode(value), as: UTF8.self)) ?? ""
        }
    }
}

/// A JSON value, for rendering any response generically.
enum JSON: Codable {
    case null, bool(Bool), int(Int64), double(Double), string(String), array([JSON]), object([String: JSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    var fields: [String: JSON] { if case .object(let fields) = self { fields } else { [:] } }

    /// The value at a column name, dotted for a nested field (`balance.balance`).
    func at(_ column: String) -> JSON? {
        column.split(separator: ".").reduce(self) { value, key in value?.fields[String(key)] }
    }

    static func of(_ value: some Encodable) throws -> JSON {
        try JSONDecoder().decode(JSON.self, from: Printer.encoder.encode(value))
    }

    static var compact: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
