import BackofficeAPI
import BackofficePlatform
import Foundation

// The operations every reviewed kind shares (its list, one record, and the four moves of review),
// each the generic handler of `APIHandler+Reviewed.swift` for its kind, and the conformances of
// its `<Kind>AtVersion` response those handlers build.

// MARK: Articles

extension Components.Responses.ArticleAtVersion: RecordAtVersion {}
extension Components.Responses.ArticleAtVersion.Headers: ETagHeaders {}
extension Components.Responses.ArticleAtVersion.Body: JSONBody {}

extension APIHandler {
    func listArticles(_ input: Operations.ListArticles.Input) async throws -> Operations.ListArticles.Output {
        let q = input.query
        let (items, next) = try await reviewedPage(
            Article.self, state: q.state?.rawValue, cursor: q.cursor, limit: q.limit)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getArticle(_ input: Operations.GetArticle.Input) async throws -> Operations.GetArticle.Output {
        .ok(try await reviewed(Article.self, input.path.articleId))
    }

    func submitArticle(_ input: Operations.SubmitArticle.Input) async throws -> Operations.SubmitArticle.Output {
        .ok(try await moved(Article.self, .submit, input.path.articleId, ifMatch: input.headers.ifMatch))
    }

    func approveArticle(_ input: Operations.ApproveArticle.Input) async throws -> Operations.ApproveArticle.Output {
        .ok(try await moved(Article.self, .approve, input.path.articleId, ifMatch: input.headers.ifMatch))
    }

    func sendBackArticle(_ input: Operations.SendBackArticle.Input) async throws -> Operations.SendBackArticle.Output {
        .ok(
            try await moved(
                Article.self, .sendBack, input.path.articleId, ifMatch: input.headers.ifMatch, commented: input.body))
    }

    func archiveArticle(_ input: Operations.ArchiveArticle.Input) async throws -> Operations.ArchiveArticle.Output {
        .ok(
            try await moved(
                Article.self, .archive, input.path.articleId, ifMatch: input.headers.ifMatch, commented: input.body))
    }

}

// MARK: Foods

extension Components.Responses.FoodAtVersion: RecordAtVersion {}
extension Components.Responses.FoodAtVersion.Headers: ETagHeaders {}
extension Components.Responses.FoodAtVersion.Body: JSONBody {}

extension APIHandler {
    func listFoods(_ input: Operations.ListFoods.Input) async throws -> Operations.ListFoods.Output {
        let q = input.query
        let (items, next) = try await reviewedPage(
            Food.self, state: q.state?.rawValue, cursor: q.cursor, limit: q.limit)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getFood(_ input: Operations.GetFood.Input) async throws -> Operations.GetFood.Output {
        .ok(try await reviewed(Food.self, input.path.foodId))
    }

    func submitFood(_ input: Operations.SubmitFood.Input) async throws -> Operations.SubmitFood.Output {
        .ok(try await moved(Food.self, .submit, input.path.foodId, ifMatch: input.headers.ifMatch))
    }

    func approveFood(_ input: Operations.ApproveFood.Input) async throws -> Operations.ApproveFood.Output {
        .ok(try await moved(Food.self, .approve, input.path.foodId, ifMatch: input.headers.ifMatch))
    }

    func sendBackFood(_ input: Operations.SendBackFood.Input) async throws -> Operations.SendBackFood.Output {
        .ok(
            try await moved(
                Food.self, .sendBack, input.path.foodId, ifMatch: input.headers.ifMatch, commented: input.body))
    }

    func archiveFood(_ input: Operations.ArchiveFood.Input) async throws -> Operations.ArchiveFood.Output {
        .ok(
            try await moved(
                Food.self, .archive, input.path.foodId, ifMatch: input.headers.ifMatch, commented: input.body))
    }

}

// MARK: Videos

extension Components.Responses.VideoAtVersion: RecordAtVersion {}
extension Components.Responses.VideoAtVersion.Headers: ETagHeaders {}
extension Components.Responses.VideoAtVersion.Body: JSONBody {}

extension APIHandler {
    func listVideos(_ input: Operations.ListVideos.Input) async throws -> Operations.ListVideos.Output {
        let q = input.query
        let (items, next) = try await reviewedPage(
            WorkoutVideo.self, state: q.state?.rawValue, cursor: q.cursor, limit: q.limit)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getVideo(_ input: Operations.GetVideo.Input) async throws -> Operations.GetVideo.Output {
        .ok(try await reviewed(WorkoutVideo.self, input.path.videoId))
    }

    func submitVideo(_ input: Operations.SubmitVideo.Input) async throws -> Operations.SubmitVideo.Output {
        .ok(try await moved(WorkoutVideo.self, .submit, input.path.videoId, ifMatch: input.headers.ifMatch))
    }

    func approveVideo(_ input: Operations.ApproveVideo.Input) async throws -> Operations.ApproveVideo.Output {
        .ok(try await moved(WorkoutVideo.self, .approve, input.path.videoId, ifMatch: input.headers.ifMatch))
    }

    func sendBackVideo(_ input: Operations.SendBackVideo.Input) async throws -> Operations.SendBackVideo.Output {
        .ok(
            try await moved(
                WorkoutVideo.self, .sendBack, input.path.videoId, ifMatch: input.headers.ifMatch, commented: input.body)
        )
    }

    func archiveVideo(_ input: Operations.ArchiveVideo.Input) async throws -> Operations.ArchiveVideo.Output {
        .ok(
            try await moved(
                WorkoutVideo.self, .archive, input.path.videoId, ifMatch: input.headers.ifMatch, commented: input.body))
    }

}

// MARK: Recipes

extension Components.Responses.RecipeAtVersion: RecordAtVersion {}
extension Components.Responses.RecipeAtVersion.Headers: ETagHeaders {}
extension Components.Responses.RecipeAtVersion.Body: JSONBody {}

extension APIHandler {
    func listRecipes(_ input: Operations.ListRecipes.Input) async throws -> Operations.ListRecipes.Output {
        let q = input.query
        let (items, next) = try await reviewedPage(
            Recipe.self, state: q.state?.rawValue, cursor: q.cursor, limit: q.limit)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getRecipe(_ input: Operations.GetRecipe.Input) async throws -> Operations.GetRecipe.Output {
        .ok(try await reviewed(Recipe.self, input.path.recipeId))
    }

    func submitRecipe(_ input: Operations.SubmitRecipe.Input) async throws -> Operations.SubmitRecipe.Output {
        .ok(try await moved(Recipe.self, .submit, input.path.recipeId, ifMatch: input.headers.ifMatch))
    }

    func approveRecipe(_ input: Operations.ApproveRecipe.Input) async throws -> Operations.ApproveRecipe.Output {
        .ok(try await moved(Recipe.self, .approve, input.path.recipeId, ifMatch: input.headers.ifMatch))
    }

    func sendBackRecipe(_ input: Operations.SendBackRecipe.Input) async throws -> Operations.SendBackRecipe.Output {
        .ok(
            try await moved(
                Recipe.self, .sendBack, input.path.recipeId, ifMatch: input.headers.ifMatch, commented: input.body))
    }

    func archiveRecipe(_ input: Operations.ArchiveRecipe.Input) async throws -> Operations.ArchiveRecipe.Output {
        .ok(
            try await moved(
                Recipe.self, .archive, input.path.recipeId, ifMatch: input.headers.ifMatch, commented: input.body))
    }
}
