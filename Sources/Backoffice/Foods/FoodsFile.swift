import BackofficePlatform
import Foundation

/// Reads a food database file as it arrives.
package typealias FoodsFileReader = RecordFileReader<FoodsFile>

/// One food read from an import file, with the line it starts on.
package struct FoodRow: Sendable {
    package var line: Int
    package var gtin: GTIN
    package var facts: FoodFacts
}

/// A food database file in Open Food Facts' column names, as its exports write them (CSV or
/// tab-separated, its other two hundred columns ignored): `code` (the barcode, required),
/// `product_name`, `brands`, `serving_quantity` (grams), `energy-kcal_100g` (or `energy_100g`
/// in kJ), `fat_100g`, `saturated-fat_100g`, `carbohydrates_100g`, `sugars_100g`, `fiber_100g`,
/// `proteins_100g`, `salt_100g`, `allergens_tags` (or `allergens`: `en:milk,en:gluten`).
/// Foods without a barcode are added one at a time. Two rows naming one GTIN in any of its
/// forms are a duplicate.
package enum FoodsFile: RecordFileLayout {
    package static let columns = [
        "code", "product_name", "brands", "serving_quantity", "energy-kcal_100g", "energy_100g", "fat_100g",
        "saturated-fat_100g", "carbohydrates_100g", "sugars_100g", "fiber_100g", "proteins_100g", "salt_100g",
        "allergens_tags", "allergens",
    ]
    package static let ignoresOtherColumns = true
    package static let keyColumn = "code"
    package static let typeHint = "numbers are numbers"
    package static func key(of row: FoodRow) -> String { row.gtin.digits }

    package static func values(ofJSONLine data: Data) throws -> [String: String] {
        throw MalformedFile(reason: "food files are CSV")
    }

    /// The import's field names of the contract's (`energy_kcal_100g`), as Open Food Facts names them.
    static let columnOfField = [
        "name": "product_name", "brand": "brands", "serving_grams": "serving_quantity",
        "energy_kcal_100g": "energy-kcal_100g", "fat_100g": "fat_100g", "saturated_fat_100g": "saturated-fat_100g",
        "carbohydrates_100g": "carbohydrates_100g", "sugars_100g": "sugars_100g", "fiber_100g": "fiber_100g",
        "proteins_100g": "proteins_100g", "salt_100g": "salt_100g",
    ]

    /// One row's values checked into a food, or nil with its issues added to `issues`.
    package static func row(line: Int, _ values: [String: String], into issues: inout [RowIssue]) -> FoodRow? {
        let barcode = values["code"]?.trimmingCharacters(in: .whitespaces) ?? ""
        let before = issues.count
        func issue(_ field: String, _ code: String, _ message: String) {
            issues.append(
                RowIssue(line: line, key: barcode.isEmpty ? nil : barcode, field: field, code: code, message: message))
        }
        var gtin: GTIN?
        do { gtin = try GTIN(validating: barcode) } catch {
            if barcode.isEmpty {
                issue("code", "required", "is required (the barcode)")
            } else {
                issue("code", error.rawValue, error.message)
            }
        }
        func number(_ column: String) -> Double? {
            let text = values[column]?.trimmingCharacters(in: .whitespaces) ?? ""
            guard !text.isEmpty else { return nil }
            guard let value = Double(text), value.isFinite else {
                issue(column, "not_a_number", "must be a number, got '\(text.prefix(40))'")
                return nil
            }
            return value
        }
        let kilojoules = number("energy_100g")
        guard let energy = number("energy-kcal_100g") ?? kilojoules.map({ $0 / 4.184 }) else {
            issue("energy-kcal_100g", "required", "is required (or energy_100g in kJ)")
            return nil
        }
        let facts = FoodFacts(
            name: values["product_name"] ?? "", brand: values["brands"], servingGrams: number("serving_quantity"),
            energyKcal: energy, fat: number("fat_100g"), saturatedFat: number("saturated-fat_100g"),
            carbohydrates: number("carbohydrates_100g"), sugars: number("sugars_100g"), fiber: number("fiber_100g"),
            proteins: number("proteins_100g"), salt: number("salt_100g"),
            allergens: allergens(values["allergens_tags"] ?? values["allergens"] ?? "", issue))
        var validation = Validation()
        facts.validate(into: &validation)
        for found in validation.issues { issue(columnOfField[found.field] ?? found.field, found.code, found.message) }
        guard let gtin, issues.count == before else { return nil }
        return FoodRow(line: line, gtin: gtin, facts: facts)
    }

    /// Open Food Facts' allergen tags (`en:milk,en:gluten`; the `en:` optional); an unknown tag is an issue.
    private static func allergens(_ text: String, _ issue: (String, String, String) -> Void) -> [Allergen] {
        var found: [Allergen] = []
        for tag in text.split(separator: ",") {
            var name = tag.trimmingCharacters(in: .whitespaces).lowercased()
            if name.hasPrefix("en:") { name.removeFirst(3) }
            guard !name.isEmpty else { continue }
            guard let allergen = Allergen(rawValue: name) else {
                issue(
                    "allergens_tags", "unknown_allergen",
                    "'\(name.prefix(40))' is not one of \(Allergen.allCases.map(\.rawValue).joined(separator: ", "))")
                continue
            }
            found.append(allergen)
        }
        return found
    }
}
