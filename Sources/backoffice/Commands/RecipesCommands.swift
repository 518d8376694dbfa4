import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Recipes {
    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A YAML or JSON recipe file (fields as the API's RecipeDraft).") var file: String
        @Option(help: "A Markdown file with the steps (in place of the file's body).") var bodyFile: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.recipe)) { client in
                var draft = try readStructuredFile(Components.Schemas.RecipeDraft.self, at: file)
                if let bodyFile { draft.body = try readTextFile(bodyFile) }
                return try await client.createRecipe(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(draft))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Recipe id.") var id: String
        @Option(help: "A YAML or JSON file with the fields to change (as the API's RecipeUpdate).") var file: String?
        @Option(help: "A Markdown file with the steps.") var bodyFile: String?
        @Option(help: "Only if the recipe is still at this version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.recipe)) { client in
                var changes =
                    try file.map { try readStructuredFile(Components.Schemas.RecipeUpdate.self, at: $0) } ?? .init()
                if let bodyFile { changes.body = try readTextFile(bodyFile) }
                let version = try await currentVersion(ifMatch, await client.getRecipe(path: .init(recipeId: id)))
                return try await client.updateRecipe(
                    path: .init(recipeId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: version),
                    body: .json(changes))
            }
        }
    }
}
