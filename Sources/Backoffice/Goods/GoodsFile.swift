import BackofficePlatform
import Foundation

/// A file of goods, as partners import and export them: CSV with a header row, or JSON Lines.
/// The columns (CSV) or keys (JSONL): `sku`, `name`, `description`, `category`, `price_cents`,
/// `price_fitpoints`, `stock`, `status`, `image_urls` (CSV: separated by spaces; JSONL: an array).
/// Read by `GoodsFileReader`.
package typealias GoodsFileReader = RecordFileReader<GoodsFile>

/// One good read from a file, with the line it starts on.
package struct GoodRow: Sendable {
    package var line: Int
    package var sku: String
    package var fields: GoodFields
    /// The status the file gives; nil keeps an existing good's (a new one starts as a draft).
    package var status: Good.Status?
}

/// What a goods file holds, and the checks of one of its rows.
package enum GoodsFile: RecordFileLayout {
    package static let columns = [
        "sku", "name", "description", "category", "price_cents", "price_fitpoints", "stock", "status", "image_urls",
    ]
    package static let ignoresOtherColumns = false
    package static let keyColumn = "sku"
    package static let typeHint = "numbers are whole numbers, image_urls a list"
    package static func key(of row: GoodRow) -> String { row.sku }

    package static func values(ofJSONLine data: Data) throws -> [String: String] {
        try JSONDecoder().decode(JSONLine.self, from: data).values
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
    package static func row(line: Int, _ values: [String: String], into issues: inout [RowIssue]) -> GoodRow? {
        let sku = values["sku"]?.trimmingCharacters(in: .whitespaces) ?? ""
        func issue(_ field: String, _ code: String, _ message: String) {
            issues.append(
                RowIssue(line: line, key: sku.isEmpty ? nil : sku, field: field, code: code, message: message))
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
