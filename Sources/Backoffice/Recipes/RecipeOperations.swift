import BackofficePlatform
import Foundation
import PostgresNIO

extension Recipe: WrittenReviewed, RowDecodable {
    package var written: RecipeContent { content }
    package static let alias = "r"
    package static let noun = "recipe"

    package static let columns = """
        \(ReviewStatus.columns("r")), v.written_by, v.title, v.summary, v.body, v.servings, v.tags, v.cover_url, \
        v.premium, \(figureColumns), \(ingredientsColumn)
        """
    package static let source = "recipes r JOIN recipe_versions v ON v.recipe_id = r.id AND v.version = r.version"
    /// A version's figures (alias `v`), as `RecipeFigures(_:from:)` reads them.
    static let figureColumns = """
        v.energy_kcal, v.fat, v.saturated_fat, v.carbohydrates, v.sugars, v.fiber, v.proteins, v.salt, v.allergens, \
        v.grams
        """
    /// A version's ingredients (alias `v`) as a JSON array, in their order.
    static let ingredientsColumn = """
        (SELECT coalesce(json_agg(json_build_object('food_id', i.food_id, 'food_version', i.food_version, \
        'name', i.name, 'quantity', i.quantity, 'unit', i.unit, 'grams', i.grams) ORDER BY i.position), '[]')::text \
        FROM recipe_ingredients i WHERE i.recipe_id = v.recipe_id AND i.version = v.version)
        """

    package init(row: PostgresRow) throws {
        let cells = row.makeRandomAccess()
        let n = ReviewStatus.count
        func cell<T: PostgresDecodable>(_ offset: Int, _: T.Type) throws -> T { try cells[n + offset].decode(T.self) }
        let ingredients = try JSONDecoder().decode(
            [StoredIngredient].self, from: Data(try cell(18, String.self).utf8))
        self.init(
            review: try ReviewStatus(row: row), writtenBy: try cell(0, UUID.self),
            content: RecipeContent(
                title: try cell(1, String.self), summary: try cell(2, String.self), body: try cell(3, String.self),
                servings: try cell(4, Int.self), tags: try cell(5, [String].self), coverURL: try cell(6, String?.self),
                premium: try cell(7, Bool.self),
                ingredients: ingredients.map { Ingredient(foodID: $0.foodID, quantity: $0.quantity, unit: $0.unit) }),
            figures: try RecipeFigures(cells, from: n + 8), ingredients: ingredients)
    }

    /// What the audit event keeps of a recipe: where it stands and what it is called.
    package var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let state: String, version: Int, liveVersion: Int?, title: String }
            return try AuditRecord.json(
                Snapshot(state: state.rawValue, version: version, liveVersion: liveVersion, title: content.title))
        }
    }
}

extension RecipeFigures {
    /// The figures in `cells` from `start` on, in the order of `Recipe.figureColumns`.
    init(_ cells: PostgresRandomAccessRow, from start: Int) throws {
        func grams(_ offset: Int) throws -> Double? { try cells[start + offset].decode(Double?.self) }
        self.init(
            energyKcal: try cells[start].decode(Double.self), fat: try grams(1), saturatedFat: try grams(2),
            carbohydrates: try grams(3), sugars: try grams(4), fiber: try grams(5), proteins: try grams(6),
            salt: try grams(7),
            allergens: try cells[start + 8].decode([String].self).compactMap(Allergen.init(rawValue:)),
            grams: try cells[start + 9].decode(Double.self))
    }
}

/// A recipe reviewed as the experts' content is (`recipes.submit`, `.approve`, `.send_back`, `.archive`).
package typealias MoveRecipe = MoveReviewed<Recipe>

extension RecipeContent: WrittenContent {
    package func check(in unit: UnitOfWork) async throws { try validate(unit.context.policies.recipes) }

    /// Adds version `version` of recipe `id`: its steps rendered (as articles' are), its figures
    /// computed from the live foods, written by the principal now.
    package func store(as version: Int, of id: UUID, in unit: UnitOfWork) async throws {
        let (figures, stored) = try await computed(in: unit)
        let html = try await MarkdownRendering.render(body).html
        let f = figures
        try await unit.execute(
            """
            INSERT INTO recipe_versions (recipe_id, version, title, summary, body, html, servings, tags, cover_url,
                premium, allergens, energy_kcal, fat, saturated_fat, carbohydrates, sugars, fiber, proteins, salt,
                grams, written_by, written_at)
            VALUES (\(id), \(version), \(title), \(summary), \(body), \(html), \(servings), \(tags), \(coverURL),
                \(premium), \(f.allergens.map(\.rawValue)), \(f.energyKcal), \(f.fat), \(f.saturatedFat),
                \(f.carbohydrates), \(f.sugars), \(f.fiber), \(f.proteins), \(f.salt), \(f.grams),
                \(unit.principal.operatorID), \(unit.now))
            """)
        try await unit.execute(
            """
            INSERT INTO recipe_ingredients (recipe_id, version, position, food_id, food_version, name, quantity, unit,
                grams)
            SELECT \(id), \(version), i.position, i.food, i.food_version, i.name, i.quantity, i.unit, i.grams
            FROM unnest(\(Array(1...stored.count))::int4[], \(stored.map(\.foodID))::uuid[],
                \(stored.map(\.foodVersion))::int4[], \(stored.map(\.name))::text[],
                \(stored.map(\.quantity))::float8[], \(stored.map(\.unit))::text[], \(stored.map(\.grams))::float8[])
                AS i(position, food, food_version, name, quantity, unit, grams)
            """)
    }
}

/// An expert or a manager writes a recipe (`recipes.create`): a draft, version 1, its figures
/// computed from the food database.
package typealias CreateRecipe = CreateReviewed<Recipe>
/// A writer saves a new version of a recipe (`recipes.update`); its figures are computed again
/// from the foods live now.
package typealias UpdateRecipe = UpdateReviewed<Recipe, RecipeChanges>

/// The fields an update sends; those absent keep their value (an empty cover URL removes it).
package struct RecipeChanges: ContentChanges {
    package var title, summary, body, coverURL: String?
    package var servings: Int?
    package var tags: [String]?
    package var premium: Bool?
    package var ingredients: [Ingredient]?

    package init() {}

    package func applied(to c: RecipeContent) -> RecipeContent {
        RecipeContent(
            title: title ?? c.title, summary: summary ?? c.summary, body: body ?? c.body,
            servings: servings ?? c.servings, tags: tags ?? c.tags, coverURL: coverURL ?? c.coverURL,
            premium: premium ?? c.premium, ingredients: ingredients ?? c.ingredients)
    }
}
