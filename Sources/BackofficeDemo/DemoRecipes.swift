import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's recipes: thirty by the nutrition expert from the demo's food database, each with its
/// figures computed from the foods it names, approved by the manager (every fifth free, the rest
/// for subscribers); the last one waits in review.
extension DemoEnvironment {
    /// A demo recipe of `Data/recipes.json`: title, tags, servings, and its ingredients by food name.
    struct DemoRecipe: Decodable {
        struct Part: Decodable {
            let food: String
            let quantity: Double
            let unit: String
        }
        let title: String
        let tags: [String]
        let servings: Int
        let ingredients: [Part]
    }

    /// Adds the recipes once (when none exists and the food database does), also to a demo database
    /// made before recipes existed.
    static func seedRecipesOnce(database: Database, policies: PolicySet) async throws {
        let demoRecipes: [DemoRecipe] = try DemoData.load("recipes")
        let names = Array(Set(demoRecipes.flatMap { $0.ingredients.map(\.food) }))
        let found = try await survey(database) { survey in
            let recipes = try await survey.count("SELECT count(*) FROM recipes")
            var foods: [String: UUID] = [:]
            for try await (name, id) in try await survey.connection.query(
                """
                SELECT DISTINCT ON (v.name) v.name, f.id FROM foods f
                JOIN food_versions v ON v.food_id = f.id AND v.version = f.live_version
                WHERE v.name = ANY(\(names)) AND f.state <> 'archived' ORDER BY v.name, f.created_at, f.id
                """, logger: survey.logger
            ).decode((String, UUID).self) {
                foods[name] = id
            }
            return (recipes, foods, try await survey.operators([experts[0], managerEmail]))
        }
        guard found.0 == 0, found.1.count == names.count, let expert = found.2[experts[0]],
            let manager = found.2[managerEmail]
        else { return }
        let (writer, reviewer) = writerAndReviewer(
            .system("demo-recipes", policies: policies), expert, manager)
        for (index, recipe) in demoRecipes.enumerated() {
            let content = RecipeContent(
                title: recipe.title,
                summary: "\(recipe.title), \(recipe.servings == 1 ? "for one" : "serves \(recipe.servings)").",
                body: "1. Weigh everything.\n2. Cook or mix as the title says.\n3. Serve **straight away**.",
                servings: recipe.servings, tags: recipe.tags, coverURL: nil, premium: index % 5 != 0,
                ingredients: recipe.ingredients.map {
                    Ingredient(foodID: found.1[$0.food]!, quantity: $0.quantity, unit: $0.unit)
                })
            let made = try await database.run(CreateRecipe(content: content), context: writer)
            _ = try await database.run(MoveRecipe(id: made.id, move: .submit), context: writer)
            if index < demoRecipes.count - 1 {
                _ = try await database.run(MoveRecipe(id: made.id, move: .approve), context: reviewer)
            }
        }
    }
}
