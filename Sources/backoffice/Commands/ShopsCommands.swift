import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Shops {
    struct Apply: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "The application, YAML or JSON.") var file: String

        func run() async throws {
            try await global.show(.single(CLIColumns.shopApplication + ["checks", "claim_code"])) { client in
                let form = try readStructuredFile(Components.Schemas.ShopApplicationForm.self, at: file)
                return try await client.applyForShop(body: .json(form))
            }
        }
    }
}
