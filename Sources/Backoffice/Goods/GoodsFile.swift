import CSV
import Foundation

/// A file of goods, as partners import and export them: CSV with a header row, or JSON Lines.
/// The columns (CSV) or keys (JSONL): `sku`, `name`, `description`, `category`, `price_cents`,
/// `price_fitpoints`, `stock`, `status`, `image_urls` (CSV: separated by spaces; JSONL: an array).
public enum GoodsFileFormat: String, Sendable, CaseIterable {
    case csv, jsonl

    static let columns = ["sku", "name", "description", "category", "price_cents", "price_fitpoints", "stock", "status", "image_urls"]
}

/// One good read from a file, with the line it starts on.
public struct GoodRow: Sendable {
    public var line: Int
    public var sku: String
    public var fields: GoodFields
    /// The status the file gives; nil keeps an existing good's (a new one starts as a draft).
    public var status: Good.Status?
}

/// A row the import refuses, by line (1 is the CSV header; JSONL lines count from 1).
public struct RowIssue: Sendable, Equatable {
    public var line: Int
    public var sku: String?
    public var field: String
    public var code: String
    public var message: String
}

/// Reads a goods file into rows and the issues of the rows it refuses (in no particular order:
/// the import sorts them with its own); never throws for a bad
/// row. A file that cannot be read at all (no header, unknown columns, not UTF-8) is refused
/// whole (`MalformedGoodsFile`).
public enum GoodsFile {
    public static func read(_ bytes: [UInt8], format: GoodsFileFormat) throws -> (rows: [GoodRow], issues: [RowIssue]) {
        var rows: [GoodRow] = []
        var issues: [RowIssue] = []
        switch format {
        case .csv: try readCSV(bytes) { line, values in parse(line: line, values, into: &rows, &issues) }
        case .jsonl: try readJSONLines(bytes) { line, values in parse(line: line, values, into: &rows, &issues) }
        }
        var seen: [String: Int] = [:]
        rows.removeAll { row in
            if let first = seen[row.sku] {
                issues.append(RowIssue(line: row.line, sku: row.sku, field: "sku", code: "duplicate_sku", message: "repeats line \(first)"))
                return true
            }
            seen[row.sku] = row.line
            return false
        }
        return (rows, issues)
    }

    /// CSV with a header row (a BOM is skipped). A row's line is where it starts: quoted fields
    /// may hold line breaks, and those are counted. A value an export neutralised (`'=…`) reads
    /// back as it was (`SafeText.csvValue`).
    private static func readCSV(_ bytes: [UInt8], _ row: (Int, [String: String]) -> Void) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw MalformedGoodsFile(reason: "the file is not UTF-8") }
        let reader: CSVReader
        do { reader = try CSVReader(stream: InputStream(data: Data(bytes)), hasHeaderRow: true) } catch {
            throw MalformedGoodsFile(reason: "no header row")
        }
        guard let header = reader.headerRow?.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }), !header.isEmpty else {
            throw MalformedGoodsFile(reason: "no header row")
        }
        let unknown = header.filter { !GoodsFileFormat.columns.contains($0) }
        guard unknown.isEmpty else {
            throw MalformedGoodsFile(
                reason: "unknown column(s) \(unknown.joined(separator: ", ")); known: \(GoodsFileFormat.columns.joined(separator: ", "))")
        }
        var line = 2 + lineBreaks(in: header)
        while let values = reader.next() {
            defer { line += 1 + lineBreaks(in: values) }
            if values.count == 1 && values[0].isEmpty { continue }  // a blank line
            var fields: [String: String] = [:]
            for (index, name) in header.enumerated() where index < values.count { fields[name] = SafeText.csvValue(values[index]) }
            if values.count != header.count { fields["__columns"] = "\(values.count)" }
            row(line, fields)
        }
        if let error = reader.error { throw MalformedGoodsFile(reason: "unreadable at line \(line): \(error)") }
    }

    private static func lineBreaks(in values: [String]) -> Int {
        values.reduce(0) { count, value in count + value.unicodeScalars.reduce(0) { $0 + ($1 == "\n" ? 1 : 0) } }
    }

    /// JSON Lines: one object per line; blank lines are skipped.
    private static func readJSONLines(_ bytes: [UInt8], _ row: (Int, [String: String]) -> Void) throws {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw MalformedGoodsFile(reason: "the file is not UTF-8") }
        let decoder = JSONDecoder()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let data = Data(raw.utf8)
            guard !raw.allSatisfy(\.isWhitespace) else { continue }
            guard let keys = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                row(index + 1, ["__json": "invalid"])
                continue
            }
            if let unknown = keys.keys.sorted().first(where: { !GoodsFileFormat.columns.contains($0) }) {
                row(index + 1, ["__unknown": unknown])
                continue
            }
            do {
                row(index + 1, try decoder.decode(JSONLine.self, from: data).values)
            } catch let DecodingError.typeMismatch(_, context) {
                row(index + 1, ["__type": context.codingPath.first?.stringValue ?? "line"])
            } catch {
                row(index + 1, ["__json": "invalid"])
            }
        }
    }

    /// One JSON line's typed values.
    private struct JSONLine: Decodable {
        let sku: String?, name: String?, description: String?, category: String?, status: String?
        let price_cents: Int64?, price_fitpoints: Int64?, stock: Int64?
        let image_urls: [String]?

        var values: [String: String] {
            var values: [String: String] = [:]
            values["sku"] = sku
            values["name"] = name
            values["description"] = description
            values["category"] = category
            values["status"] = status
            values["price_cents"] = price_cents.map(String.init)
            values["price_fitpoints"] = price_fitpoints.map(String.init)
            values["stock"] = stock.map(String.init)
            values["image_urls"] = image_urls?.joined(separator: " ")
            return values
        }
    }

    /// One row's fields checked into a good, or its issues.
    private static func parse(line: Int, _ values: [String: String], into rows: inout [GoodRow], _ issues: inout [RowIssue]) {
        let sku = values["sku"]?.trimmingCharacters(in: .whitespaces) ?? ""
        func issue(_ field: String, _ code: String, _ message: String) {
            issues.append(RowIssue(line: line, sku: sku.isEmpty ? nil : sku, field: field, code: code, message: message))
        }
        if values["__json"] != nil { return issue("line", "invalid_json", "not a JSON object") }
        if let key = values["__unknown"] { return issue(key, "unknown_field", "known: \(GoodsFileFormat.columns.joined(separator: ", "))") }
        if let key = values["__type"] { return issue(key, "invalid_type", "has the wrong type (numbers are whole numbers, image_urls a list)") }
        if let count = values["__columns"] {
            return issue("line", "column_count", "\(count) values for \(GoodsFileFormat.columns.count) or fewer columns")
        }
        let issuesBefore = issues.count
        func number(_ field: String, required: Bool) -> Int64? {
            let text = values[field]?.trimmingCharacters(in: .whitespaces) ?? ""
            if text.isEmpty {
                if required {
                    issue(field, "required", "is required")
                }
                return nil
            }
            guard let value = Int64(text) else {
                issue(field, "not_a_whole_number", "must be a whole number, got '\(text.prefix(40))'")
                return nil
            }
            return value
        }
        let priceCents = number("price_cents", required: false)
        let priceFitPoints = number("price_fitpoints", required: false)
        let stock = number("stock", required: true)
        var status: Good.Status?
        if let text = values["status"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            status = Good.Status(rawValue: text)
            if status == nil {
                issue("status", "unknown_status", "must be draft, active or archived")
            }
        }
        let fields = GoodFields(
            name: values["name"] ?? "", description: values["description"], category: values["category"] ?? "", priceCents: priceCents,
            priceFitPoints: priceFitPoints, stock: stock ?? 0,
            imageURLs: values["image_urls"].map { $0.split(whereSeparator: \.isWhitespace).map(String.init) })
        var validation = Validation()
        validation.require(GoodFields.isSKU(sku), "sku", "invalid_sku", "must be 1–64 letters, digits, dots, dashes or underscores")
        fields.validate(into: &validation)
        for found in validation.issues where !(found.field == "stock" && stock == nil) {
            issue(found.field, found.code, found.message)
        }
        if issues.count == issuesBefore { rows.append(GoodRow(line: line, sku: sku, fields: fields, status: status)) }
    }
}

/// A goods file that cannot be read at all.
public struct MalformedGoodsFile: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
