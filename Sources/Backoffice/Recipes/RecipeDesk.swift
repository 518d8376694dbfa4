import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

/// Recipes on the experts' desk: the steps in Markdown, and the ingredients as rows of a food
/// (its barcode or its name, as the food database has it), a quantity and a unit. The figures
/// are never typed: the page shows them as computed from the foods.
extension Recipe: VersionedReviewed, DeskKind {
    package typealias Content = RecipeVersionText
    typealias Creation = CreateReviewed<Self>
    static let sectionTitle = "Recipes"
    static let deskTitle = "My recipes"
    static let editorHint =
        "Name each ingredient by its barcode or its name in the food database: the calories and macros per serving "
        + "are computed from the foods. It is saved as a draft; a manager reviews it."
    /// The ingredient rows an editor offers beyond those written (at least `minimumRows` in all).
    static let spareRows = 3
    static let minimumRows = 6

    var heading: String { content.title }
    var line: String {
        let servings = content.servings == 1 ? "1 serving" : "\(content.servings) servings"
        return "\(servings) · \(Int(figures.energyKcal.rounded())) kcal a serving"
            + (content.premium ? " · premium" : "")
    }

    var deskFacts: [DeskFact] {
        let f = figures
        let grams = { (value: Double?) in
            value.map { "\(DeskField.figure(($0 * 10).rounded() / 10)) g" } ?? "incomplete"
        }
        return Self.lines(of: RecipeVersionText(content: content, ingredients: ingredients)).map {
            DeskFact(label: $0.label, value: $0.value)
        } + [
            DeskFact(label: "Energy a serving", value: "\(Int(f.energyKcal.rounded())) kcal"),
            DeskFact(
                label: "A serving's fat, carbohydrates, proteins",
                value: [f.fat, f.carbohydrates, f.proteins].map(grams).joined(separator: ", ")),
            DeskFact(
                label: "Allergens (from the foods)",
                value: f.allergens.isEmpty ? "none" : f.allergens.map(\.rawValue).joined(separator: ", ")),
            DeskFact(label: "In the app", value: liveVersion.map { "version \($0)" } ?? "not yet"),
        ]
    }

    static func heading(of version: RecipeVersionText) -> String { version.content.title }

    static func text(of version: RecipeVersionText) -> String {
        (lines(of: version).map { "\($0.label): \($0.value)" } + ["", version.content.body]).joined(separator: "\n")
    }

    private static func lines(of version: RecipeVersionText) -> [(label: String, value: String)] {
        let c = version.content
        return [
            ("Summary", c.summary), ("Servings", String(c.servings)),
            ("Tags", c.tags.isEmpty ? "none" : c.tags.joined(separator: ", ")), ("Cover", c.coverURL ?? "none"),
            ("Access", c.premium ? "premium" : "free"),
        ]
            + version.ingredients.enumerated().map { index, i in
                ("Ingredient \(index + 1)", "\(DeskField.figure(i.quantity)) \(i.unit) \(i.name)")
            }
    }
}

/// One stored version of a recipe as the desk lists and compares it: what was written, with its
/// ingredients as stored (each food's name then).
package struct RecipeVersionText: VersionContent {
    package var content: RecipeContent
    package var ingredients: [StoredIngredient]

    package static let columns =
        "v.title, v.summary, v.body, v.servings, v.tags, v.cover_url, v.premium, \(Recipe.ingredientsColumn)"

    init(content: RecipeContent, ingredients: [StoredIngredient]) {
        (self.content, self.ingredients) = (content, ingredients)
    }

    package init(_ cells: PostgresRandomAccessRow, from start: Int) throws {
        func cell<T: PostgresDecodable>(_ offset: Int, _: T.Type) throws -> T {
            try cells[start + offset].decode(T.self)
        }
        ingredients = try JSONDecoder().decode([StoredIngredient].self, from: Data(try cell(7, String.self).utf8))
        content = RecipeContent(
            title: try cell(0, String.self), summary: try cell(1, String.self), body: try cell(2, String.self),
            servings: try cell(3, Int.self), tags: try cell(4, [String].self), coverURL: try cell(5, String?.self),
            premium: try cell(6, Bool.self),
            ingredients: ingredients.map { Ingredient(foodID: $0.foodID, quantity: $0.quantity, unit: $0.unit) })
    }
}
