import BackofficeConsole
import BackofficePlatform
import Foundation

/// Foods on the experts' desk: the figures per 100 g as the editor's fields (named as the
/// contract and the import name them, so each refusal sits next to its field), the barcode only
/// on a new food (it never changes).
extension Food: DeskKind {
    static let sectionTitle = "Foods"
    static let deskTitle = "My foods"
    static let editorHint = "It is saved as a draft; a manager checks its figures before the app shows it."
    static var importAction: Action? { ImportFoods.action }

    var heading: String { facts.name }
    var line: String {
        ([facts.brand, "\(DeskField.figure(facts.energyKcal)) kcal per 100 g", gtin.map { "barcode \($0)" }]
            .compactMap { $0 }).joined(separator: " · ")
    }

    var deskFacts: [DeskFact] {
        [DeskFact(label: "Barcode", value: gtin?.description ?? "none (a food without a package)")]
            + Self.lines(of: facts).map { DeskFact(label: $0.label, value: $0.value) }
            + [DeskFact(label: "In the app", value: liveVersion.map { "version \($0)" } ?? "not yet")]
    }

    static func heading(of version: FoodFacts) -> String { version.name }

    static func text(of version: FoodFacts) -> String {
        lines(of: version).map { "\($0.label): \($0.value)" }.joined(separator: "\n")
    }

    /// A version's figures as labelled lines, an unknown nutrient said so.
    private static func lines(of f: FoodFacts) -> [(label: String, value: String)] {
        let grams = { (value: Double?) in value.map { "\(DeskField.figure($0)) g" } ?? "not known" }
        return [
            ("Name", f.name), ("Brand", f.brand ?? "none"), ("Serving", grams(f.servingGrams)),
            ("Energy per 100 g", "\(DeskField.figure(f.energyKcal)) kcal"),
        ] + zip(nutrientLabels, f.nutrients).map { ("\($0) per 100 g", grams($1.grams)) }
            + [("Allergens", f.allergens.isEmpty ? "none" : f.allergens.map(\.rawValue).joined(separator: ", "))]
    }

    private static let nutrientLabels = [
        "Fat", "Saturated fat", "Carbohydrates", "Sugars", "Fiber", "Proteins", "Salt",
    ]

    static func fields(_ values: [String: String], isNew: Bool, in console: ConsoleRequest) async throws
        -> [DeskField]
    {
        let value = { (name: String) in values[name] ?? "" }
        let nutrients = zip(nutrientLabels, FoodFacts(name: "", energyKcal: 0).nutrients).map { label, nutrient in
            DeskField(name: nutrient.field, label: "\(label) (g)", kind: .number, value: value(nutrient.field))
        }
        let barcode = DeskField(
            name: "gtin", label: "Barcode (optional)", kind: .text, value: value("gtin"),
            hint: "GTIN-8, 12, 13 or 14 digits with its check digit; empty for a food without a package.")
        return (isNew ? [barcode] : []) + [
            DeskField(name: "name", label: "Name", kind: .text, value: value("name")),
            DeskField(name: "brand", label: "Brand (optional)", kind: .text, value: value("brand")),
            DeskField(
                name: "serving_grams", label: "Serving (g, optional)", kind: .number, value: value("serving_grams")),
            DeskField(
                name: "energy_kcal_100g", label: "Energy per 100 g (kcal)", kind: .number,
                value: value("energy_kcal_100g")),
            DeskField(
                name: "nutrients", label: "Per 100 g (empty when not known)", kind: .group,
                parts: Array(nutrients)),
            DeskField(
                name: "allergens", label: "Allergens", kind: .checkboxes,
                options: Allergen.allCases.map {
                    .choice(
                        value: $0.rawValue, label: $0.rawValue.replacingOccurrences(of: "-", with: " "),
                        selected: value("allergens_\($0.rawValue)") == "yes")
                }),
        ]
    }

    static func values(of food: Food) -> [String: String] {
        let f = food.facts
        var values = [
            "name": f.name, "brand": f.brand ?? "", "serving_grams": f.servingGrams.map(DeskField.figure) ?? "",
            "energy_kcal_100g": DeskField.figure(f.energyKcal),
        ]
        for nutrient in f.nutrients { values[nutrient.field] = nutrient.grams.map(DeskField.figure) ?? "" }
        for allergen in f.allergens { values["allergens_\(allergen.rawValue)"] = "yes" }
        return values
    }

    static func written(from form: ConsoleForm, in console: ConsoleRequest) async throws -> FoodFacts {
        var reader = DeskFormReader(form)
        let facts = FoodFacts(
            name: reader.text("name"), brand: reader.text("brand"), servingGrams: reader.number("serving_grams"),
            energyKcal: reader.number("energy_kcal_100g", required: true) ?? 0, fat: reader.number("fat_100g"),
            saturatedFat: reader.number("saturated_fat_100g"), carbohydrates: reader.number("carbohydrates_100g"),
            sugars: reader.number("sugars_100g"), fiber: reader.number("fiber_100g"),
            proteins: reader.number("proteins_100g"), salt: reader.number("salt_100g"),
            allergens: Allergen.allCases.filter { reader.ticked("allergens_\($0.rawValue)") })
        try reader.check()
        return facts
    }

    static func creation(_ written: FoodFacts, from form: ConsoleForm) -> CreateFood {
        CreateFood(gtin: form.text("gtin"), facts: written)
    }
}
