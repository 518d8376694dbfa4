import BackofficePlatform
import Foundation
import PostgresNIO

/// A recipe's figures per serving, computed from its ingredients' entries in the food database:
/// each nutrient is Σ (grams ÷ 100 × the food's figure per 100 g) ÷ servings, to 0.01; a nutrient
/// one ingredient's food does not know is nil (incomplete, never low). The allergens are every
/// one its ingredients' foods name.
package struct RecipeFigures: Sendable, Equatable {
    package var energyKcal: Double
    package var fat, saturatedFat, carbohydrates, sugars, fiber, proteins, salt: Double?
    package var allergens: [Allergen]
    /// The whole recipe's weight, in grams.
    package var grams: Double

    /// The figures of `servings` servings of `parts` (each ingredient's grams and its food's figures).
    package static func compute(_ parts: [(grams: Double, facts: FoodFacts)], servings: Int) -> RecipeFigures {
        func perServing(_ figure: (FoodFacts) -> Double?) -> Double? {
            var sum = 0.0
            for part in parts {
                guard let per100 = figure(part.facts) else { return nil }
                sum += part.grams / 100 * per100
            }
            return (sum / Double(servings) * 100).rounded() / 100
        }
        return RecipeFigures(
            energyKcal: perServing(\.energyKcal) ?? 0, fat: perServing(\.fat), saturatedFat: perServing(\.saturatedFat),
            carbohydrates: perServing(\.carbohydrates), sugars: perServing(\.sugars), fiber: perServing(\.fiber),
            proteins: perServing(\.proteins), salt: perServing(\.salt),
            allergens: Allergen.allCases.filter { allergen in parts.contains { $0.facts.allergens.contains(allergen) }
            },
            grams: (parts.reduce(0) { $0 + $1.grams } * 100).rounded() / 100)
    }
}

extension RecipeContent {
    /// The ingredients resolved against the live foods they name, with their grams, and the
    /// figures they make. An ingredient whose food is not live is 422 `food_not_live`; `serving`
    /// for a food without a serving size is 422 `no_serving_size`; a tag promising the absence of
    /// an allergen the ingredients name (`gluten-free` with gluten) is 422 `contradicts_allergens`.
    func computed(in unit: UnitOfWork) async throws -> (figures: RecipeFigures, ingredients: [StoredIngredient]) {
        let measures = unit.context.policies.recipes.measures
        var live: [UUID: (version: Int, facts: FoodFacts)] = [:]
        for row in try await unit.all(
            """
            SELECT f.id, f.live_version, \(unescaped: FoodFacts.columns) FROM \(unescaped: LiveFood.source)
            WHERE f.id = ANY(\(ingredients.map(\.foodID))::uuid[]) AND \(unescaped: LiveFood.isLive)
            """, { $0 })
        {
            let c = try row.decode((UUID, Int).self)
            live[c.0] = (c.1, try FoodFacts(row.makeRandomAccess(), from: 2))
        }
        var validation = Validation()
        var stored: [StoredIngredient] = []
        for (index, ingredient) in ingredients.enumerated() {
            guard let food = live[ingredient.foodID] else {
                validation.require(false, "ingredients[\(index)].food_id", "food_not_live", "must be a live food")
                continue
            }
            let perUnit: Double? =
                switch ingredient.unit {
                case "g": 1
                case "serving": food.facts.servingGrams
                default: measures[ingredient.unit]
                }
            guard let perUnit else {
                validation.require(
                    false, "ingredients[\(index)].unit", "no_serving_size", "this food has no serving size: use grams")
                continue
            }
            stored.append(
                StoredIngredient(
                    foodID: ingredient.foodID, foodVersion: food.version, name: food.facts.name,
                    quantity: ingredient.quantity, unit: ingredient.unit, grams: ingredient.quantity * perUnit))
        }
        try validation.check()
        let figures = RecipeFigures.compute(
            zip(stored, ingredients).map { ($0.0.grams, live[$0.1.foodID]!.facts) }, servings: servings)
        for tag in tags {
            guard let promised = Self.promises[tag], let named = promised.first(where: figures.allergens.contains)
            else { continue }
            throw DomainError.invalid(
                "tags", "contradicts_allergens", "'\(tag)' contradicts the ingredients, which contain \(named.rawValue)"
            )
        }
        return (figures, stored)
    }
}
