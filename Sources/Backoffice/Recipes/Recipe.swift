import BackofficePlatform
import Foundation
import PostgresNIO

/// A recipe by the nutrition experts: its newest version and where it stands in review.
package struct Recipe: Sendable, Equatable, HoldsReviewStatus {
    package var review: ReviewStatus
    package var writtenBy: UUID
    /// The newest version: what its writer wrote, and what was computed from the food database.
    package var content: RecipeContent
    package var figures: RecipeFigures
    package var ingredients: [StoredIngredient]
}

/// What a writer writes: one version of a recipe. The figures are never written: they are
/// computed from the ingredients' entries in the food database.
package struct RecipeContent: Sendable, Equatable {
    package var title: String
    package var summary: String
    /// The steps, in Markdown (rendered and sanitised as articles are).
    package var body: String
    package var servings: Int
    package var tags: [String]
    package var coverURL: String?
    /// Shown only to subscribers (the recipes of the requirements are).
    package var premium: Bool
    package var ingredients: [Ingredient]

    package init(
        title: String, summary: String, body: String, servings: Int, tags: [String], coverURL: String?,
        premium: Bool, ingredients: [Ingredient]
    ) {
        let trimmed = { (text: String) in text.trimmingCharacters(in: .whitespacesAndNewlines) }
        (self.title, self.summary, self.servings, self.premium) = (trimmed(title), trimmed(summary), servings, premium)
        self.body = trimmed(body.replacingOccurrences(of: "\r\n", with: "\n"))
        self.tags = tags.map { trimmed($0).lowercased() }.filter { !$0.isEmpty }
        self.coverURL = coverURL.map(trimmed).flatMap { $0.isEmpty ? nil : $0 }
        self.ingredients = ingredients
    }

    /// The tags that promise the absence of an allergen: refused on a recipe whose ingredients name it.
    static let promises: [String: Set<Allergen>] = [
        "gluten-free": [.gluten], "dairy-free": [.milk], "nut-free": [.nuts, .peanuts], "egg-free": [.eggs],
        "vegan": [.milk, .eggs, .fish, .crustaceans, .molluscs],
    ]

    /// Refuses content that breaks a rule, naming each field (the ingredients' foods are checked
    /// when the figures are computed).
    func validate(_ policy: RecipesPolicy) throws {
        var validation = Validation()
        validation.text(title, "title", max: 200)
        validation.text(summary, "summary", max: 500)
        validation.text(body, "body", max: MarkdownRendering.maxLength)
        validation.require((1...50).contains(servings), "servings", "out_of_range", "must be 1–50")
        validation.require(tags.count <= 10, "tags", "too_many", "at most 10 tags")
        validation.require(
            tags.allSatisfy { Validation.matches($0, length: 1...40, ArticleContent.slugByte) }, "tags", "invalid_tag",
            "each tag is 1–40 lower-case letters, digits or dashes")
        if let coverURL {
            validation.require(
                coverURL.count <= 2000 && URL(string: coverURL)?.scheme == "https"
                    && URL(string: coverURL)?.host != nil,
                "cover_url", "invalid_url", "must be an https URL")
        }
        validation.require(
            (1...100).contains(ingredients.count), "ingredients", "out_of_range", "a recipe has 1–100 ingredients")
        for (index, ingredient) in ingredients.enumerated() {
            validation.require(
                ingredient.quantity.isFinite && ingredient.quantity > 0 && ingredient.quantity <= 100_000,
                "ingredients[\(index)].quantity", "out_of_range", "must be over 0 and at most 100000")
            validation.require(
                policy.units.contains(ingredient.unit), "ingredients[\(index)].unit", "unknown_unit",
                "must be one of \(policy.units.joined(separator: ", "))")
        }
        try validation.check()
    }
}

/// One ingredient as written: a food of the database, and how much of it.
package struct Ingredient: Sendable, Equatable, Codable {
    package var foodID: UUID
    package var quantity: Double
    /// `g`, `serving` (the food's serving size) or a measure of `policies/recipes.yaml`.
    package var unit: String

    package init(foodID: UUID, quantity: Double, unit: String) {
        (self.foodID, self.quantity, self.unit) = (foodID, quantity, unit.lowercased())
    }
}

/// One ingredient as stored with a version: the food version its figures came from, its name
/// then, and the grams its quantity came to.
package struct StoredIngredient: Sendable, Equatable, Codable {
    package var foodID: UUID
    package var foodVersion: Int
    package var name: String
    package var quantity: Double
    package var unit: String
    package var grams: Double

    enum CodingKeys: String, CodingKey {
        case foodID = "food_id", foodVersion = "food_version", name, quantity, unit, grams
    }
}
