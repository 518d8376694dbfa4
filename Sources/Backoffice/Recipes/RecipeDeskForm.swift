import BackofficeConsole
import BackofficePlatform
import Foundation

/// The recipe editor's form: its fields, a recipe's values, and the form read back into a
/// recipe, each ingredient's food found by its barcode or its exact name among the live foods.
extension Recipe {
    static func fields(_ values: [String: String], isNew: Bool, in console: ConsoleRequest) async throws
        -> [DeskField]
    {
        let value = { (name: String) in values[name] ?? "" }
        let units = console.context.policies.recipes.units
        let rows = max(minimumRows, ingredientRows(in: values) + spareRows)
        let ingredients = (0..<rows).map { row in
            let name = "ingredient_\(row)"
            return DeskField(
                name: name, label: "Ingredient \(row + 1)", kind: .group,
                parts: [
                    DeskField(
                        name: "\(name)_food", label: "Food: barcode or name", kind: .text,
                        value: value("\(name)_food")),
                    DeskField(
                        name: "\(name)_quantity", label: "Quantity", kind: .number, value: value("\(name)_quantity")),
                    DeskField(
                        name: "\(name)_unit", label: "Unit", kind: .select,
                        options: units.map {
                            .choice(value: $0, label: $0, selected: $0 == (values["\(name)_unit"] ?? "g"))
                        }),
                    DeskField(name: "\(name)_id", label: "", kind: .hidden, value: value("\(name)_id")),
                    DeskField(name: "\(name)_was", label: "", kind: .hidden, value: value("\(name)_was")),
                ])
        }
        return [
            DeskField(name: "title", label: "Title", kind: .text, value: value("title")),
            DeskField(
                name: "summary", label: "Summary (shown in the app's list)", kind: .textarea, value: value("summary")),
            DeskField(name: "servings", label: "Servings", kind: .number, value: value("servings")),
            DeskField(
                name: "tags", label: "Tags (separated by commas)", kind: .text, value: value("tags"),
                hint:
                    "vegetarian, gluten-free …: a tag that promises the absence of an allergen the foods name is "
                    + "refused."
            ),
            DeskField(name: "cover_url", label: "Cover image (optional)", kind: .url, value: value("cover_url")),
            DeskField(name: "premium", label: "Premium (subscribers only)", kind: .checkbox, value: value("premium")),
        ] + ingredients + [
            DeskField(
                name: "body", label: "Steps (Markdown)", kind: .textarea, value: value("body"),
                hint: "Rendered and sanitised as articles are: script, styles and frames are removed.", rows: 12)
        ]
    }

    /// How many ingredient rows `values` fill (the last filled row's number), at most 100.
    private static func ingredientRows(in values: [String: String]) -> Int {
        (0..<100).last { !(values["ingredient_\($0)_food"] ?? "").isEmpty }.map { $0 + 1 } ?? 0
    }

    static func values(of recipe: Recipe) -> [String: String] {
        let c = recipe.content
        var values = [
            "title": c.title, "summary": c.summary, "servings": String(c.servings),
            "tags": c.tags.joined(separator: ", "), "cover_url": c.coverURL ?? "", "premium": c.premium ? "yes" : "",
            "body": c.body,
        ]
        for (row, ingredient) in recipe.ingredients.enumerated() {
            let name = "ingredient_\(row)"
            values["\(name)_food"] = ingredient.name
            values["\(name)_was"] = ingredient.name
            values["\(name)_id"] = ingredient.foodID.text
            values["\(name)_quantity"] = DeskField.figure(ingredient.quantity)
            values["\(name)_unit"] = ingredient.unit
        }
        return values
    }

    static func written(from form: ConsoleForm, in console: ConsoleRequest) async throws -> RecipeContent {
        var reader = DeskFormReader(form)
        let servings = reader.number("servings", required: true)
        var ingredients: [Ingredient] = []
        for row in filledRows(form) {
            let name = "ingredient_\(row)"
            let quantity = reader.number("\(name)_quantity", required: true)
            let food = try await foodID(named: reader.text("\(name)_food"), row: name, form: form, in: console)
            switch food {
            case .success(let id):
                ingredients.append(Ingredient(foodID: id, quantity: quantity ?? 0, unit: reader.text("\(name)_unit")))
            case .failure(let issue): reader.refuse("\(name)_food", issue.code, issue.message)
            }
        }
        try reader.check()
        return RecipeContent(
            title: reader.text("title"), summary: reader.text("summary"), body: form["body"] ?? "",
            servings: Int((servings ?? 0).rounded()), tags: reader.words("tags"), coverURL: form.text("cover_url"),
            premium: reader.ticked("premium"), ingredients: ingredients)
    }

    /// The rows whose food is filled, in order: the recipe's ingredients.
    private static func filledRows(_ form: ConsoleForm) -> [Int] {
        (0..<100).filter { form.text("ingredient_\($0)_food") != nil }
    }

    /// The use case names an ingredient by its place among the filled rows (`ingredients[2].unit`):
    /// the form's field is that row's (`ingredient_4_unit`).
    static func formField(_ field: String, in form: ConsoleForm) -> String {
        guard field.hasPrefix("ingredients["), let close = field.firstIndex(of: "]"),
            let index = Int(field[field.index(field.startIndex, offsetBy: 12)..<close])
        else { return field }
        let rows = filledRows(form)
        guard rows.indices.contains(index) else { return field }
        let part = field[field.index(after: close)...].dropFirst()
        return "ingredient_\(rows[index])_" + (part == "food_id" ? "food" : String(part))
    }

    /// The live food a row names: the one it named before when its text is unchanged, else the
    /// live food with that barcode, else the one live food with exactly that name (any case).
    private static func foodID(named text: String, row: String, form: ConsoleForm, in console: ConsoleRequest)
        async throws -> Result<UUID, IngredientRefusal>
    {
        if text == form.text("\(row)_was"), let id = form.text("\(row)_id").flatMap(UUID.init(uuidString:)) {
            return .success(id)
        }
        let found = try await console.read(IngredientFood(text: text))
        switch found.count {
        case 1: return .success(found[0])
        case 0:
            return .failure(
                IngredientRefusal(code: "no_such_food", message: "no live food has this barcode or name"))
        default:
            return .failure(
                IngredientRefusal(
                    code: "ambiguous_food", message: "several live foods have this name: give the barcode"))
        }
    }
}

/// Why an ingredient's text names no one live food.
struct IngredientRefusal: Error {
    let code: String, message: String
}

/// The live foods a recipe's ingredient text names (`recipes.create`): the food with that id, or
/// with that barcode when the text is a GTIN, else those with exactly that name in any case (over
/// the names' index); at most two.
struct IngredientFood: Query {
    static let action: Action = "recipes.create"
    let text: String

    func read(in unit: UnitOfWork) async throws -> [UUID] {
        let (id, barcode) = (UUID(uuidString: text), try? GTIN(validating: text))
        return try await unit.all(
            """
            SELECT f.id FROM \(unescaped: LiveFood.source)
            WHERE \(unescaped: LiveFood.isLive)
              AND CASE WHEN \(id)::uuid IS NOT NULL THEN f.id = \(id)
                       WHEN \(barcode?.digits)::text IS NOT NULL THEN f.gtin = \(barcode?.digits)
                       ELSE lower(v.name) = lower(\(text)) END
            LIMIT 2
            """
        ) { try $0.decode(UUID.self) }
    }
}
