import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension RecipeFigures {
    var api: Components.Schemas.RecipeFigures {
        get throws {
            Components.Schemas.RecipeFigures(
                energyKcal: energyKcal, fat: fat, saturatedFat: saturatedFat, carbohydrates: carbohydrates,
                sugars: sugars, fiber: fiber, proteins: proteins, salt: salt,
                allergens: try allergens.map { try .init(known: $0.rawValue) }, grams: grams)
        }
    }
}

extension StoredIngredient {
    var api: Components.Schemas.RecipeIngredient {
        .init(foodId: foodID.text, foodVersion: foodVersion, name: name, quantity: quantity, unit: unit, grams: grams)
    }
}

extension Recipe {
    var api: Components.Schemas.Recipe {
        get throws {
            let c = content
            return Components.Schemas.Recipe(
                id: id.text, state: try .init(known: state.rawValue), version: version, liveVersion: liveVersion,
                authorId: authorID.text, title: c.title, summary: c.summary, body: c.body, servings: c.servings,
                tags: c.tags, coverUrl: c.coverURL, premium: c.premium, figures: try figures.api,
                ingredients: ingredients.map(\.api), reviewComment: reviewComment, submittedAt: submittedAt,
                publishedAt: publishedAt, createdAt: createdAt, updatedAt: updatedAt, updatedBy: updatedBy.text,
                writtenBy: writtenBy.text)
        }
    }
}

extension CustomerRecipe {
    /// As the app shows it: with its steps and ingredients only in the recipe's own read, and only when it opens.
    func api(detailed: Bool) throws -> Components.Schemas.CustomerRecipe {
        let c = recipe.content
        let shown = detailed && opens
        return Components.Schemas.CustomerRecipe(
            id: recipe.id.text, version: recipe.version, title: c.title, summary: c.summary, servings: c.servings,
            tags: c.tags, coverUrl: c.coverURL, premium: c.premium, opens: opens, figures: try recipe.figures.api,
            html: shown ? html : nil, ingredients: shown ? recipe.ingredients.map(\.api) : nil,
            publishedAt: recipe.publishedAt ?? recipe.updatedAt)
    }
}

extension APIHandler {
    /// The ingredients a request names, their food ids parsed (`ingredients[N].food_id`).
    func ingredients(_ drafts: [Components.Schemas.IngredientDraft]) throws -> [Ingredient] {
        try drafts.enumerated().map { index, draft in
            Ingredient(
                foodID: try parseID(draft.foodId, "ingredients[\(index)].food_id"), quantity: draft.quantity,
                unit: draft.unit)
        }
    }

    func createRecipe(_ input: Operations.CreateRecipe.Input) async throws -> Operations.CreateRecipe.Output {
        let d: Components.Schemas.RecipeDraft = try json(input.body)
        let content = RecipeContent(
            title: d.title, summary: d.summary, body: d.body, servings: d.servings, tags: d.tags ?? [],
            coverURL: d.coverUrl, premium: d.premium ?? true, ingredients: try ingredients(d.ingredients))
        return .created(try await written(CreateRecipe(content: content), body: d, status: 201))
    }

    func updateRecipe(_ input: Operations.UpdateRecipe.Input) async throws -> Operations.UpdateRecipe.Output {
        let u: Components.Schemas.RecipeUpdate = try json(input.body)
        let id = try parseID(input.path.recipeId, "recipe_id")
        var changes = RecipeChanges()
        (changes.title, changes.summary, changes.body, changes.coverURL) = (u.title, u.summary, u.body, u.coverUrl)
        (changes.servings, changes.tags, changes.premium) = (u.servings, u.tags, u.premium)
        changes.ingredients = try u.ingredients.map(ingredients)
        return .ok(
            try await written(UpdateRecipe(id: id, changes: changes, ifMatch: input.headers.ifMatch), on: id, body: u))
    }

    func listCustomerRecipes(_ input: Operations.ListCustomerRecipes.Input) async throws
        -> Operations.ListCustomerRecipes.Output
    {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.timeAndID(input.query.cursor).map { (time: $0.createdAt, id: $0.id) }
        let (recipes, subscribed) = try await read(
            CustomerRecipes(
                customerID: try parseID(input.path.customerId, "customer_id"), tag: input.query.tag, after: after,
                limit: limit + 1))
        let (items, next) = keysetPage(recipes, limit: limit) {
            Cursor.timeAndID($0.recipe.publishedAt ?? $0.recipe.updatedAt, $0.recipe.id)
        }
        let etag = EntityTag.digest(
            "r", ["\(subscribed)", next ?? "-"] + items.map { "\($0.recipe.id.text):\($0.recipe.version)" })
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(
            .init(
                headers: .init(eTag: etag),
                body: .json(.init(items: try items.map { try $0.api(detailed: false) }, nextCursor: next))))
    }

    func getCustomerRecipe(_ input: Operations.GetCustomerRecipe.Input) async throws
        -> Operations.GetCustomerRecipe.Output
    {
        let recipeID = try parseID(input.path.recipeId, "recipe_id")
        let (recipes, subscribed) = try await read(
            CustomerRecipes(customerID: try parseID(input.path.customerId, "customer_id"), recipeID: recipeID))
        guard let recipe = recipes.first else { throw DomainError.notFound("Recipe \(recipeID.text)") }
        let etag = EntityTag.digest("r", ["\(subscribed)", "\(recipe.recipe.id.text):\(recipe.recipe.version)"])
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(.init(headers: .init(eTag: etag), body: .json(try recipe.api(detailed: true))))
    }
}
