import Foundation
import BackofficePlatform

/// The checks of one row of a goods file.
enum GoodsFile {
    static func lineBreaks(in values: [String]) -> Int {
        values.reduce(0) { count, value in count + value.unicodeScalars.reduce(0) { $0 + ($1 == "\n" ? 1 : 0) } }
    }

    /// One JSON line's typed values.
    struct JSONLine: Decodable {
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

    /// One row's values checked into a good, or nil with its issues added to `issues`.
    static func parse(line: Int, _ values: [String: String], into issues: inout [RowIssue]) -> GoodRow? {
        let sku = values["sku"]?.trimmingCharacters(in: .whitespaces) ?? ""
        func issue(_ field: String, _ code: String, _ message: String) {
            issues.append(
                RowIssue(line: line, sku: sku.isEmpty ? nil : sku, field: field, code: code, message: message))
        }
        if values["__json"] != nil {
            issue("line", "invalid_json", "not a JSON object")
            return nil
        }
        if let key = values["__unknown"] {
            issue(key, "unknown_field", "known: \(GoodsFileFormat.columns.joined(separator: ", "))")
            return nil
        }
        if let key = values["__type"] {
            issue(key, "invalid_type", "has the wrong type (numbers are whole numbers, image_urls a list)")
            return nil
        }
        if let count = values["__columns"] {
            issue("line", "column_count", "\(count) values for \(GoodsFileFormat.columns.count) or fewer columns")
            return nil
        }
        if let field = values.keys.sorted().first(where: { values[$0]?.contains("\0") == true }) {
            issue(field, "invalid_character", "must not contain the NUL character (U+0000)")
            return nil
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
            name: values["name"] ?? "", description: values["description"], category: values["category"] ?? "",
            priceCents: priceCents,
            priceFitPoints: priceFitPoints, stock: stock ?? 0,
            imageURLs: values["image_urls"].map { $0.split(whereSeparator: \.isWhitespace).map(String.init) })
        var validation = Validation()
        validation.require(
            GoodFields.isSKU(sku), "sku", "invalid_sku", "must be 1–64 letters, digits, dots, dashes or underscores")
        fields.validate(into: &validation)
        for found in validation.issues where !(found.field == "stock" && stock == nil) {
            issue(found.field, found.code, found.message)
        }
        return issues.count == issuesBefore ? GoodRow(line: line, sku: sku, fields: fields, status: status) : nil
    }
}

/// A goods file that cannot be read at all.
package struct MalformedGoodsFile: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { reason }
}
