import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Recipes: figures computed from the food database, allergens derived, review, premium for subscribers")
struct RecipesTests {
    @Test("property: over random ingredients, each figure per serving is the sum over the ingredients ÷ servings")
    func figuresAreSums() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let parts: [(grams: Double, facts: FoodFacts)] = (0..<Int.random(in: 1...8, using: &generator)).map { _ in
                let known = Bool.random(using: &generator) || Bool.random(using: &generator)
                let facts = FoodFacts(
                    name: "f", energyKcal: Double.random(in: 0...900, using: &generator),
                    fat: Double.random(in: 0...30, using: &generator),
                    proteins: known ? Double.random(in: 0...30, using: &generator) : nil,
                    allergens: Bool.random(using: &generator)
                        ? [Allergen.allCases.randomElement(using: &generator)!] : [])
                return (Double.random(in: 1...500, using: &generator), facts)
            }
            let servings = Int.random(in: 1...8, using: &generator)
            let figures = RecipeFigures.compute(parts, servings: servings)
            var (energy, fat, proteins): (Double, Double, Double?) = (0, 0, 0)
            for part in parts {
                energy += part.grams * part.facts.energyKcal / 100
                fat += part.grams * part.facts.fat! / 100
                proteins = part.facts.proteins.flatMap { p in proteins.map { $0 + part.grams * p / 100 } }
            }
            #expect(abs(figures.energyKcal - energy / Double(servings)) <= 0.005 + 1e-9)
            #expect(abs(figures.fat! - fat / Double(servings)) <= 0.005 + 1e-9)
            #expect((figures.proteins == nil) == (proteins == nil), "unknown in one food: unknown in the recipe")
            if let proteins { #expect(abs(figures.proteins! - proteins / Double(servings)) <= 0.005 + 1e-9) }
            #expect(Set(figures.allergens) == Set(parts.flatMap(\.facts.allergens)))
            #expect(figures.carbohydrates == nil, "no food knows carbohydrates")
        }
    }

    /// A live food with these figures, made by the expert and approved by the manager; its id.
    static func liveFood(_ env: TestEnvironment, _ facts: FoodFacts) async throws -> UUID {
        let food = try await env.database.run(CreateFood(gtin: nil, facts: facts), context: env.context(.expert))
        _ = try await env.database.run(MoveFood(id: food.id, move: .submit), context: env.context(.expert))
        _ = try await env.database.run(MoveFood(id: food.id, move: .approve), context: env.context(.backendManager))
        return food.id
    }

    @Test(
        """
        a recipe's figures come from its foods (grams, a tablespoon of the policy, a serving of the food): \
        2 servings of 80 g oats, a tablespoon of honey and an egg; allergens derived; a gluten-free tag on it, \
        a food not live, a serving of a food without one, an unknown unit: each 422 by name, nothing stored
        """
    )
    func computedFromFoods() async throws {
        try await TestEnvironment.with { env in
            let oats = try await Self.liveFood(
                env,
                FoodFacts(
                    name: "Oats", energyKcal: 372, fat: 7, carbohydrates: 58.7, proteins: 13.5, allergens: [.gluten]))
            let honey = try await Self.liveFood(
                env, FoodFacts(name: "Honey", energyKcal: 304, fat: 0, carbohydrates: 82.4, proteins: 0.3))
            let egg = try await Self.liveFood(
                env,
                FoodFacts(
                    name: "Egg", servingGrams: 50, energyKcal: 143, fat: 9.5, carbohydrates: 0.7, proteins: 12.6,
                    allergens: [.eggs]))
            let draft = try await env.database.run(
                CreateFood(gtin: nil, facts: FoodFacts(name: "Draft food", energyKcal: 10)),
                context: env.context(.expert))
            let expert = env.fixture.tokens[.expert]!
            @Sendable func recipe(_ ingredients: String, tags: String = "[]") -> String {
                #"{"title":"Oat pancakes","summary":"Two pancakes","body":"1. Mix.\n2. **Fry**.","servings":2,"#
                    + #""tags":\#(tags),"ingredients":\#(ingredients)}"#
            }
            let good =
                #"[{"food_id":"\#(oats)","quantity":80,"unit":"g"},{"food_id":"\#(honey)","quantity":1,"unit":"tbsp"},"#
                + #"{"food_id":"\#(egg)","quantity":1,"unit":"serving"}]"#
            try await env.withApp { client in
                for (body, field) in [
                    (recipe(good, tags: #"["gluten-free"]"#), "tags"),
                    (recipe(#"[{"food_id":"\#(draft.id)","quantity":10,"unit":"g"}]"#), "ingredients[0].food_id"),
                    (recipe(#"[{"food_id":"\#(oats)","quantity":1,"unit":"serving"}]"#), "ingredients[0].unit"),
                    (recipe(#"[{"food_id":"\#(oats)","quantity":1,"unit":"handful"}]"#), "ingredients[0].unit"),
                ] {
                    let refused = try await client.call(.post, "/v1/recipes", token: expert, json: body)
                    #expect(refused.status == 422 && refused.text.contains("\"\(field)\""), "\(field): \(refused.text)")
                }
                #expect(try await env.ownerScalar("SELECT count(*) FROM recipes", as: Int.self) == 0)
                let made = try await client.call(.post, "/v1/recipes", token: expert, json: recipe(good))
                #expect(made.status == 201, "\(made.text)")
                let figures = try #require(made.json["figures"] as? [String: Any])
                // (80 × 372 + 15 × 304 + 50 × 143) / 100 / 2 = (297.6 + 45.6 + 71.5) / 2
                #expect(figures["energy_kcal"] as? Double == 207.35, "\(figures)")
                #expect(figures["proteins"] as? Double == 8.57, "(10.8 + 0.045 + 6.3) / 2 = 8.5725 → 8.57")
                #expect(figures["allergens"] as? [String] == ["gluten", "eggs"])
                #expect(figures["grams"] as? Double == 145)
                let grams = (made.json["ingredients"] as? [[String: Any]])?.compactMap { $0["grams"] as? Double }
                #expect(grams == [80, 15, 50])
            }
        }
    }

    @Test(
        """
        the app's read: a premium recipe opens with its steps (sanitised) and ingredients only for a subscriber; \
        the list carries neither; an unchanged page is 304; a draft is not live (404)
        """
    )
    func forCustomer() async throws {
        try await TestEnvironment.with { env in
            let oats = try await Self.liveFood(env, FoodFacts(name: "Oats", energyKcal: 372))
            let content = RecipeContent(
                title: "Porridge", summary: "Warm oats", body: "Boil.<script>x</script>", servings: 1,
                tags: ["breakfast"],
                coverURL: nil, premium: true, ingredients: [Ingredient(foodID: oats, quantity: 50, unit: "g")])
            let made = try await env.database.run(CreateRecipe(content: content), context: env.context(.expert))
            let draft = try await env.database.run(CreateRecipe(content: content), context: env.context(.expert))
            _ = try await env.database.run(MoveRecipe(id: made.id, move: .submit), context: env.context(.expert))
            _ = try await env.database.run(
                MoveRecipe(id: made.id, move: .approve), context: env.context(.backendManager))
            let subscriber = try await SubscribeTests.returningCustomer(env)
            _ = try await env.database.runStaged(
                Subscribe(
                    customerID: subscriber.id, planID: "monthly", paymentMethod: SimulatedPaymentGateway.approvedMethod,
                    payments: SimulatedPaymentGateway()), context: env.context(.appService))
            let other = try await env.customer()
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let opened = try await client.call(
                    .get, "/v1/customers/\(subscriber.id.text)/recipes/\(made.id.text)", token: app)
                #expect(opened.json["opens"] as? Bool == true && opened["html"]?.contains("<script") == false)
                #expect((opened.json["ingredients"] as? [Any])?.count == 1, "\(opened.text)")
                let shut = try await client.call(
                    .get, "/v1/customers/\(other.id.text)/recipes/\(made.id.text)", token: app)
                #expect(shut.json["opens"] as? Bool == false && shut["html"] == nil && shut.json["ingredients"] == nil)
                let list = try await client.call(
                    .get, "/v1/customers/\(subscriber.id.text)/recipes?tag=breakfast", token: app)
                let items = try #require(list.json["items"] as? [[String: Any]])
                #expect(items.count == 1 && items[0]["html"] == nil && items[0]["ingredients"] == nil)
                let tag = try #require(list.headers[.eTag])
                let again = try await client.call(
                    .get, "/v1/customers/\(subscriber.id.text)/recipes?tag=breakfast", token: app,
                    headers: ["If-None-Match": tag])
                #expect(again.status == 304)
                let notLive = try await client.call(
                    .get, "/v1/customers/\(subscriber.id.text)/recipes/\(draft.id.text)", token: app)
                #expect(notLive.status == 404)
            }
        }
    }
}
