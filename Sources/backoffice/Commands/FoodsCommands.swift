import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Foods {
    /// The figures a food is written with (per 100 g; an option absent keeps the food's figure).
    struct Figures: ParsableArguments {
        @Option(help: "The food's name.") var name: String?
        @Option(help: "The brand.") var brand: String?
        @Option(help: "One serving, in grams.") var servingGrams: Double?
        @Option(name: .customLong("energy-kcal-100g"), help: "kcal per 100 g.") var energyKcal: Double?
        @Option(name: .customLong("fat-100g"), help: "Fat, g per 100 g.") var fat: Double?
        @Option(name: .customLong("saturated-fat-100g"), help: "Saturated fat, g per 100 g.") var saturatedFat: Double?
        @Option(name: .customLong("carbohydrates-100g"), help: "Carbohydrates, g per 100 g.") var carbohydrates: Double?
        @Option(name: .customLong("sugars-100g"), help: "Sugars, g per 100 g.") var sugars: Double?
        @Option(name: .customLong("fiber-100g"), help: "Fiber, g per 100 g.") var fiber: Double?
        @Option(name: .customLong("proteins-100g"), help: "Proteins, g per 100 g.") var proteins: Double?
        @Option(name: .customLong("salt-100g"), help: "Salt, g per 100 g.") var salt: Double?
        @Option(help: "An allergen (gluten, milk, nuts, …); repeat for more.")
        var allergen: [Components.Schemas.Allergen] = []
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "The barcode (GTIN-8, UPC-A, EAN-13 or GTIN-14); none for a plain food.") var gtin: String?
        @OptionGroup(title: "Figures") var figures: Figures

        func run() async throws {
            try await global.show(.single(CLIColumns.food)) { client in
                guard let name = figures.name, let energy = figures.energyKcal else {
                    throw CLIFailure.usage("error: --name and --energy-kcal-100g are required")
                }
                return try await client.createFood(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            gtin: gtin, name: name, brand: figures.brand, servingGrams: figures.servingGrams,
                            energyKcal100g: energy, fat100g: figures.fat, saturatedFat100g: figures.saturatedFat,
                            carbohydrates100g: figures.carbohydrates, sugars100g: figures.sugars,
                            fiber100g: figures.fiber, proteins100g: figures.proteins, salt100g: figures.salt,
                            allergens: figures.allergen)))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Food id.") var id: String
        @OptionGroup(title: "Figures") var figures: Figures
        @Option(help: "Only if the food is still at this version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.food)) { client in
                let version = try await currentVersion(ifMatch, await client.getFood(path: .init(foodId: id)))
                return try await client.updateFood(
                    path: .init(foodId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: version),
                    body: .json(
                        .init(
                            name: figures.name, brand: figures.brand, servingGrams: figures.servingGrams,
                            energyKcal100g: figures.energyKcal, fat100g: figures.fat,
                            saturatedFat100g: figures.saturatedFat, carbohydrates100g: figures.carbohydrates,
                            sugars100g: figures.sugars, fiber100g: figures.fiber, proteins100g: figures.proteins,
                            salt100g: figures.salt, allergens: figures.allergen.isEmpty ? nil : figures.allergen)))
            }
        }
    }

    struct Import: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "The file (.csv, or tab-separated .tsv), in Open Food Facts' column names.") var file: String
        @Flag(help: "Import nothing if any row has an error.") var allOrNothing = false
        @Flag(help: "Report what would change; change nothing.") var dryRun = false

        func run() async throws {
            let body = try Transfer.upload(file)
            var rejected = 0
            try await global.show(.rows(key: "errors", ["line", "gtin", "field", "code", "message"])) { client in
                let output = try await client.importFoods(
                    query: .init(allOrNothing: allOrNothing, dryRun: dryRun),
                    headers: .init(idempotencyKey: global.changeKey()), body: .csv(body))
                if case .ok(let ok) = output { rejected = (try? ok.body.json.rejected) ?? 0 }
                return output
            }
            if rejected > 0 { throw ExitCode(6) }
        }
    }
}
