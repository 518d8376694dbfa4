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
        let recipe = try await change(CreateRecipe(content: content), body: d, status: 201) { try $0.api }
        return .created(.init(headers: .init(eTag: EntityTag.of(Int64(recipe.version))), body: .json(recipe)))
    }

    func listRecipes(_ input: Operations.ListRecipes.Input) async throws -> Operations.ListRecipes.Output {
        let limit = try pageLimit(input.query.limit)
        let state = try input.query.state.map { try ReviewState(known: $0.rawValue) }
        let (items, next) = try await ListRecipes.page(state: state, after: input.query.cursor, limit: limit) {
            try await read($0)
        }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getRecipe(_ input: Operations.GetRecipe.Input) async throws -> Operations.GetRecipe.Output {
        let recipe = try await read(GetRecipe(id: try parseID(input.path.recipeId, "recipe_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(Int64(recipe.version))), body: .json(try recipe.api)))
    }

    func updateRecipe(_ input: Operations.UpdateRecipe.Input) async throws -> Operations.UpdateRecipe.Output {
        let u: Components.Schemas.RecipeUpdate = try json(input.body)
        let id = try parseID(input.path.recipeId, "recipe_id")
        var changes = RecipeChanges()
        (changes.title, changes.summary, changes.body, changes.coverURL) = (u.title, u.summary, u.body, u.coverUrl)
        (changes.servings, changes.tags, changes.premium) = (u.servings, u.tags, u.premium)
        changes.ingredients = try u.ingredients.map(ingredients)
        let recipe = try await change(
            UpdateRecipe(id: id, changes: changes, ifMatch: input.headers.ifMatch), on: id, body: u
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(Int64(recipe.version))), body: .json(recipe)))
    }

    func submitRecipe(_ input: Operations.SubmitRecipe.Input) async throws -> Operations.SubmitRecipe.Output {
        let (recipe, tag) = try await move(Recipe.self, .submit, input.path.recipeId, ifMatch: input.headers.ifMatch) {
            try $0.api
        }
        return .ok(.init(headers: .init(eTag: tag), body: .json(recipe)))
    }

    func approveRecipe(_ input: Operations.ApproveRecipe.Input) async throws -> Operations.ApproveRecipe.Output {
        let (recipe, tag) = try await move(Recipe.self, .approve, input.path.recipeId, ifMatch: input.headers.ifMatch) {
            try $0.api
        }
        return .ok(.init(headers: .init(eTag: tag), body: .json(recipe)))
    }

    func sendBackRecipe(_ input: Operations.SendBackRecipe.Input) async throws -> Operations.SendBackRecipe.Output {
        let body: Components.Schemas.ReviewComment = try json(input.body)
        let (recipe, tag) = try await move(
            Recipe.self, .sendBack, input.path.recipeId, ifMatch: input.headers.ifMatch, body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: tag), body: .json(recipe)))
    }

    func archiveRecipe(_ input: Operations.ArchiveRecipe.Input) async throws -> Operations.ArchiveRecipe.Output {
        let body: Components.Schemas.ReviewComment = try json(input.body)
        let (recipe, tag) = try await move(
            Recipe.self, .archive, input.path.recipeId, ifMatch: input.headers.ifMatch, body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: tag), body: .json(recipe)))
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
