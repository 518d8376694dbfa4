import BackofficePlatform
import Foundation
import PostgresNIO

/// Recipes in every state (`recipes.list`), as `ListReviewed` lists reviewed content.
package typealias ListRecipes = ListReviewed<Recipe>
/// One recipe, its newest version (`recipes.read`); another writer's is 404 to an expert.
package typealias GetRecipe = GetReviewed<Recipe>

/// A live recipe as one customer's app shows it: the live version, and whether it opens for them.
package struct CustomerRecipe: Sendable, Equatable {
    package var recipe: Recipe
    /// The live version's sanitised steps.
    package var html: String
    /// Whether the customer may open it: a free recipe, or a premium one for a subscriber. One
    /// that does not open is answered without its steps and ingredients.
    package var opens: Bool
}

/// The live recipes as one customer's app shows them (`recipes.for_customer`), newest publication
/// first, a page after `after`, `tag` filtering, in one statement; a premium recipe opens for a
/// customer whose subscription is live (`customers.subscription`). With `recipeID`, that one.
/// - Throws: 404 for a customer not found or deleted.
package struct CustomerRecipes: Query {
    package static let action: Action = "recipes.for_customer"
    let customerID: UUID
    let recipeID: UUID?
    let tag: String?
    let after: (time: Date, id: UUID)?
    let limit: Int

    package init(
        customerID: UUID, recipeID: UUID? = nil, tag: String? = nil, after: (time: Date, id: UUID)? = nil,
        limit: Int = 1
    ) {
        (self.customerID, self.recipeID, self.tag, self.after, self.limit) = (customerID, recipeID, tag, after, limit)
    }

    /// The recipes, and whether the customer subscribes (what the answer depends on besides them).
    package func read(in unit: UnitOfWork) async throws -> (recipes: [CustomerRecipe], subscribed: Bool) {
        var subscribed: Bool?
        var recipes: [CustomerRecipe] = []
        for row in try await unit.all(
            """
            SELECT \(unescaped: Recipe.columns), c.subscription = 'active', r.id IS NOT NULL, v.html
            FROM customers c
            LEFT JOIN LATERAL (
                SELECT r.* FROM recipes r JOIN recipe_versions v ON v.recipe_id = r.id AND v.version = r.live_version
                WHERE r.live_version IS NOT NULL AND r.state <> 'archived'
                  AND (\(recipeID)::uuid IS NULL OR r.id = \(recipeID))
                  AND (\(tag)::text IS NULL OR \(tag) = ANY(v.tags))
                  AND (\(after?.time)::timestamptz IS NULL
                       OR (r.first_published_at, r.id) < (\(after?.time), \(after?.id)))
                ORDER BY r.first_published_at DESC, r.id DESC LIMIT \(limit)
            ) r ON true
            LEFT JOIN recipe_versions v ON v.recipe_id = r.id AND v.version = r.live_version
            WHERE c.id = \(customerID) AND c.status <> 'deleted'
            ORDER BY r.first_published_at DESC, r.id DESC
            """, { $0 })
        {
            let cells = row.makeRandomAccess()
            let (subscriber, found) = (try cells[30].decode(Bool.self), try cells[31].decode(Bool.self))
            subscribed = subscriber
            guard found else { continue }
            let recipe = try Recipe(row: row)
            recipes.append(
                CustomerRecipe(
                    recipe: recipe, html: try cells[32].decode(String.self),
                    opens: !recipe.content.premium || subscriber))
        }
        guard let subscribed else { throw DomainError.notFound("Customer \(customerID.text)") }
        return (recipes, subscribed)
    }
}
