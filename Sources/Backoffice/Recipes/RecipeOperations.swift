import BackofficePlatform
import Foundation
import PostgresNIO

extension Recipe: Reviewed, RowDecodable {
    package static let auditTargetType = "recipe"
    package static let table = "recipes"
    package static let alias = "r"
    package static let versionTable = "recipe_versions"
    package static let versionKey = "recipe_id"
    package static let noun = "recipe"

    package static let columns = """
        r.id, r.author_id, r.state, r.version, r.live_version, r.review_comment, r.submitted_at, \
        r.first_published_at, r.created_at, r.updated_at, r.updated_by, v.written_by, v.title, v.summary, v.body, \
        v.servings, v.tags, v.cover_url, v.premium, \(figureColumns), \(ingredientsColumn)
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
        let c = try row.decode(
            (
                UUID, UUID, String, Int, Int?, String?, Date?, Date?, Date, Date, UUID, UUID, String, String, String,
                Int, [String], String?, Bool
            ).self)
        let cells = row.makeRandomAccess()
        let ingredients = try JSONDecoder().decode(
            [StoredIngredient].self, from: Data(try cells[29].decode(String.self).utf8))
        self.init(
            id: c.0, authorID: c.1, state: try ReviewState(known: c.2), version: c.3, liveVersion: c.4,
            reviewComment: c.5, submittedAt: c.6, publishedAt: c.7, createdAt: c.8, updatedAt: c.9, updatedBy: c.10,
            writtenBy: c.11,
            content: RecipeContent(
                title: c.12, summary: c.13, body: c.14, servings: c.15, tags: c.16, coverURL: c.17, premium: c.18,
                ingredients: ingredients.map { Ingredient(foodID: $0.foodID, quantity: $0.quantity, unit: $0.unit) }),
            figures: try RecipeFigures(cells, from: 19), ingredients: ingredients)
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

extension RecipeContent {
    /// Adds version `version` of recipe `id`: the content checked, its steps rendered (as articles'
    /// are), its figures computed from the live foods, written by the principal now.
    func store(as version: Int, of id: UUID, in unit: UnitOfWork) async throws {
        try validate(unit.context.policies.recipes)
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
package struct CreateRecipe: AuditedOperation {
    package static let action: Action = "recipes.create"
    let content: RecipeContent

    package init(content: RecipeContent) { self.content = content }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Recipe> {
        try content.validate(unit.context.policies.recipes)
        let (id, writer) = (unit.newID(), unit.principal.operatorID)
        try await unit.execute(
            """
            INSERT INTO recipes (id, author_id, state, version, created_at, updated_at, updated_by)
            VALUES (\(id), \(writer), 'draft', 1, \(unit.now), \(unit.now), \(writer))
            """)
        try await content.store(as: 1, of: id, in: unit)
        return try await Recipe.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A writer saves a new version of a recipe (`recipes.update`), as articles' writers do; its
/// figures are computed again from the foods live now.
package struct UpdateRecipe: AuditedOperation {
    package static let action: Action = "recipes.update"
    let recipeID: UUID
    let changes: RecipeChanges
    let ifMatch: String?

    package init(recipeID: UUID, changes: RecipeChanges, ifMatch: String?) {
        (self.recipeID, self.changes, self.ifMatch) = (recipeID, changes, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Recipe> {
        let before = try await Recipe.forNewVersion(recipeID, ifMatch: ifMatch, in: unit)
        let content = changes.applied(to: before.content)
        try await content.store(as: before.version + 1, of: before.id, in: unit)
        try await Recipe.newVersion(before.version + 1, of: before.id, in: unit)
        return try await Recipe.audited(Self.action, before.id, before: before, in: unit)
    }
}

/// The fields an update sends; those absent keep their value (an empty cover URL removes it).
package struct RecipeChanges: Sendable {
    package var title, summary, body, coverURL: String?
    package var servings: Int?
    package var tags: [String]?
    package var premium: Bool?
    package var ingredients: [Ingredient]?

    package init() {}

    func applied(to c: RecipeContent) -> RecipeContent {
        RecipeContent(
            title: title ?? c.title, summary: summary ?? c.summary, body: body ?? c.body,
            servings: servings ?? c.servings, tags: tags ?? c.tags, coverURL: coverURL ?? c.coverURL,
            premium: premium ?? c.premium, ingredients: ingredients ?? c.ingredients)
    }
}
