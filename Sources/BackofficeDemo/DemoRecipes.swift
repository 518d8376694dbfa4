import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's recipes: thirty by the nutrition expert from the demo's food database, each with its
/// figures computed from the foods it names, approved by the manager (every fifth free, the rest
/// for subscribers); the last one waits in review.
extension DemoEnvironment {
    /// A demo recipe: title, tags, servings, and its ingredients as (food name, quantity, unit).
    typealias DemoRecipe = (title: String, tags: [String], servings: Int, ingredients: [(String, Double, String)])

    static let demoRecipes: [DemoRecipe] = [
        (
            "Overnight oats", ["breakfast", "vegetarian"], 1,
            [("Rolled oats", 50, "g"), ("Semi-skimmed milk", 150, "ml"), ("Banana", 1, "serving")]
        ),
        (
            "Peanut butter porridge", ["breakfast", "vegetarian"], 1,
            [("Rolled oats", 60, "g"), ("Semi-skimmed milk", 200, "ml"), ("Peanut butter", 1, "tbsp")]
        ),
        (
            "Yoghurt and granola pot", ["breakfast", "vegetarian"], 1,
            [("Greek yoghurt", 150, "g"), ("Granola", 40, "g"), ("Apple", 80, "g")]
        ),
        (
            "Muesli with apple", ["breakfast", "vegetarian"], 1,
            [("Muesli", 45, "g"), ("Semi-skimmed milk", 150, "ml"), ("Apple", 100, "g")]
        ),
        (
            "Spinach omelette", ["breakfast", "vegetarian", "gluten-free"], 1,
            [("Egg", 2, "serving"), ("Spinach", 60, "g"), ("Olive oil", 1, "tsp")]
        ),
        (
            "Eggs on toast", ["breakfast", "vegetarian"], 1,
            [("Egg", 2, "serving"), ("Wholegrain bread", 2, "serving")]
        ),
        (
            "Smoked salmon toast", ["breakfast", "high-protein"], 1,
            [("Wholegrain bread", 2, "serving"), ("Smoked salmon", 50, "g")]
        ),
        (
            "Banana rice cakes", ["snack", "vegetarian"], 1,
            [("Rice cakes", 3, "serving"), ("Peanut butter", 1, "tbsp"), ("Banana", 60, "g")]
        ),
        (
            "Almond and chocolate bites", ["snack", "vegetarian"], 4,
            [("Almonds", 80, "g"), ("Dark chocolate", 60, "g"), ("Rolled oats", 40, "g")]
        ),
        (
            "Hummus and apple plate", ["snack", "vegan"], 1,
            [("Hummus", 60, "g"), ("Apple", 120, "g"), ("Rice cakes", 2, "serving")]
        ),
        (
            "Tuna pasta salad", ["lunch", "high-protein"], 2,
            [
                ("Wholewheat pasta", 150, "g"), ("Tuna in water", 1, "serving"), ("Spinach", 60, "g"),
                ("Olive oil", 1, "tbsp"),
            ]
        ),
        (
            "Chickpea and spinach stew", ["dinner", "vegan", "gluten-free"], 3,
            [("Chickpeas", 400, "g"), ("Spinach", 150, "g"), ("Tomato soup", 300, "ml"), ("Olive oil", 1, "tbsp")]
        ),
        (
            "Lentil soup", ["lunch", "vegan"], 4,
            [("Lentils", 200, "g"), ("Tomato soup", 600, "ml"), ("Olive oil", 1, "tbsp")]
        ),
        (
            "Chicken and rice bowl", ["dinner", "high-protein", "gluten-free"], 2,
            [("Chicken breast, raw", 300, "g"), ("Basmati rice", 150, "g"), ("Broccoli", 200, "g")]
        ),
        (
            "Tofu stir-fry with noodles", ["dinner", "vegetarian"], 2,
            [("Tofu", 250, "g"), ("Egg noodles", 150, "g"), ("Broccoli", 150, "g"), ("Olive oil", 1, "tbsp")]
        ),
        (
            "Sweet potato wedges", ["side", "vegan", "gluten-free"], 2,
            [("Sweet potato", 400, "g"), ("Olive oil", 1, "tbsp")]
        ),
        (
            "Honey-mustard chicken", ["dinner", "high-protein"], 2,
            [("Chicken breast, raw", 300, "g"), ("Mustard", 2, "tbsp"), ("Sweet potato", 300, "g")]
        ),
        (
            "Cheese and broccoli pasta", ["dinner", "vegetarian"], 3,
            [("Wholewheat pasta", 225, "g"), ("Broccoli", 250, "g"), ("Cheddar cheese", 90, "g")]
        ),
        (
            "Salmon and rice", ["dinner", "high-protein"], 2,
            [("Smoked salmon", 120, "g"), ("Basmati rice", 150, "g"), ("Spinach", 100, "g")]
        ),
        (
            "Green smoothie", ["breakfast", "vegetarian", "gluten-free"], 1,
            [("Spinach", 40, "g"), ("Banana", 1, "serving"), ("Greek yoghurt", 100, "g"), ("Orange juice", 150, "ml")]
        ),
        (
            "Chocolate protein shake", ["snack", "high-protein"], 1,
            [("Semi-skimmed milk", 300, "ml"), ("Protein bar", 1, "serving"), ("Banana", 1, "serving")]
        ),
        (
            "Tofu scramble", ["breakfast", "vegan", "gluten-free"], 2,
            [("Tofu", 300, "g"), ("Spinach", 100, "g"), ("Olive oil", 1, "tbsp")]
        ),
        (
            "Chickpea salad", ["lunch", "vegan", "gluten-free"], 2,
            [("Chickpeas", 240, "g"), ("Spinach", 80, "g"), ("Olive oil", 1, "tbsp"), ("Apple", 100, "g")]
        ),
        (
            "Egg fried rice", ["dinner", "vegetarian", "gluten-free"], 2,
            [("Basmati rice", 150, "g"), ("Egg", 2, "serving"), ("Broccoli", 150, "g"), ("Olive oil", 1, "tbsp")]
        ),
        (
            "Cheddar toastie", ["lunch", "vegetarian"], 1,
            [("Wholegrain bread", 2, "serving"), ("Cheddar cheese", 40, "g")]
        ),
        (
            "Lentil and sweet potato curry", ["dinner", "vegan", "gluten-free"], 4,
            [("Lentils", 160, "g"), ("Sweet potato", 400, "g"), ("Tomato soup", 400, "ml"), ("Spinach", 100, "g")]
        ),
        (
            "Baked apple with yoghurt", ["dessert", "vegetarian", "gluten-free"], 2,
            [("Apple", 2, "serving"), ("Greek yoghurt", 150, "g"), ("Almonds", 20, "g")]
        ),
        (
            "Noodle soup", ["lunch"], 2,
            [("Egg noodles", 100, "g"), ("Chicken breast, raw", 150, "g"), ("Spinach", 60, "g")]
        ),
        (
            "Granola bars", ["snack", "vegetarian"], 8,
            [
                ("Rolled oats", 200, "g"), ("Peanut butter", 4, "tbsp"), ("Dark chocolate", 50, "g"),
                ("Almonds", 60, "g"),
            ]
        ),
        (
            "Tuna and egg salad", ["lunch", "high-protein", "gluten-free"], 2,
            [("Tuna in water", 2, "serving"), ("Egg", 2, "serving"), ("Spinach", 80, "g"), ("Olive oil", 1, "tbsp")]
        ),
    ]

    /// Adds the recipes once (when none exists and the food database does), also to a demo database
    /// made before recipes existed.
    static func seedRecipesOnce(database: Database, policies: PolicySet) async throws {
        let names = Array(Set(demoRecipes.flatMap { $0.ingredients.map(\.0) }))
        let found = try await database.transaction(for: .system) { connection in
            let recipes = try await firstRow("SELECT count(*) FROM recipes", on: connection, logger: database.logger) {
                try $0.decode(Int.self)
            }
            var foods: [String: UUID] = [:]
            for try await (name, id) in try await connection.query(
                """
                SELECT DISTINCT ON (v.name) v.name, f.id FROM foods f
                JOIN food_versions v ON v.food_id = f.id AND v.version = f.live_version
                WHERE v.name = ANY(\(names)) AND f.state <> 'archived' ORDER BY v.name, f.created_at, f.id
                """, logger: database.logger
            ).decode((String, UUID).self) {
                foods[name] = id
            }
            let people = try await operators(
                [experts[0], "manager@healthtrack.example"], on: connection, database: database)
            return (recipes ?? 0, foods, people)
        }
        guard found.0 == 0, found.1.count == names.count, let expert = found.2[experts[0]],
            let manager = found.2["manager@healthtrack.example"]
        else { return }
        let context = OperationContext.system("demo-recipes", policies: policies)
        let (writer, reviewer) = (context.acting(as: principal(expert)), context.acting(as: principal(manager)))
        for (index, recipe) in demoRecipes.enumerated() {
            let content = RecipeContent(
                title: recipe.title,
                summary: "\(recipe.title), \(recipe.servings == 1 ? "for one" : "serves \(recipe.servings)").",
                body: "1. Weigh everything.\n2. Cook or mix as the title says.\n3. Serve **straight away**.",
                servings: recipe.servings, tags: recipe.tags, coverURL: nil, premium: index % 5 != 0,
                ingredients: recipe.ingredients.map { Ingredient(foodID: found.1[$0.0]!, quantity: $0.1, unit: $0.2) })
            let made = try await database.run(CreateRecipe(content: content), context: writer)
            _ = try await database.run(MoveRecipe(id: made.id, move: .submit), context: writer)
            if index < demoRecipes.count - 1 {
                _ = try await database.run(MoveRecipe(id: made.id, move: .approve), context: reviewer)
            }
        }
    }
}
