import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's food database: 5,000 packaged foods (ten brands of twenty-five staples, each in
/// twenty variants) imported by the nutrition expert as one file in Open Food Facts' columns and
/// approved by the manager, and plain foods without a barcode (the ingredients recipes are made
/// of) added one at a time, two of them still waiting in the review queue. Barcodes start with 20,
/// GS1's prefix for numbers used inside one company, so none is a real product's.
extension DemoEnvironment {
    /// A staple: its figures per 100 g (energy, fat, saturated fat, carbohydrates, sugars, fiber,
    /// proteins, salt), allergens and serving.
    struct DemoFood: Decodable {
        let name: String
        let per100g: [Double]
        let allergens: String
        let serving: Double
    }

    /// `Data/foods.json`: the twenty-five staples the packaged foods vary, and the plain foods.
    struct DemoFoods: Decodable {
        let staples: [DemoFood]
        let plain: [FoodFacts]
    }

    static let brands = [
        "Green Valley", "Morning Mill", "Harvest & Co", "Blue Coast", "Simply Good", "Northfield", "Sunrise Farm",
        "Urban Pantry", "Little Orchard", "Peak Nutrition",
    ]
    static let variants = [
        "", "Organic", "Light", "Family pack", "Snack size", "Value", "Classic", "Original", "Extra", "Mini",
        "Crunchy", "Fine", "Coarse", "Sea salt", "Lightly salted", "Unsalted", "Honey", "Vanilla", "Spiced",
        "Chef's",
    ]

    /// Adds the food database once (when no food exists), also to a demo database made before foods existed.
    static func seedFoodsOnce(database: Database, policies: PolicySet) async throws {
        guard let (writer, reviewer) = try await reviewedSeed("foods", by: experts[0], "demo-foods", database, policies)
        else { return }
        let foods: DemoFoods = try DemoData.load("foods")
        let contents = try FoodsFileReader.read(Array(foodsFile(foods.staples).utf8), format: .csv)
        let imported = try await database.run(
            ImportFoods(contents: contents, allOrNothing: true, dryRun: false), context: writer)
        if let id = imported.id { _ = try await database.run(ApproveFoodImport(importID: id), context: reviewer) }
        try await seedPlainFoods(foods.plain, writer: writer, reviewer: reviewer, database: database)
    }

    /// The 5,000 packaged foods as a file in Open Food Facts' columns.
    static func foodsFile(_ staples: [DemoFood]) -> String {
        var file =
            "code,product_name,brands,serving_quantity,energy-kcal_100g,fat_100g,saturated-fat_100g,"
            + "carbohydrates_100g,sugars_100g,fiber_100g,proteins_100g,salt_100g,allergens_tags\n"
        var number = 0
        for brand in brands {
            for staple in staples {
                for variant in variants {
                    number += 1
                    let body = Array("20" + String(format: "%010d", number)).map { Int(String($0))! }
                    let code = body.map(String.init).joined() + String(GTIN.checkDigit(of: body))
                    let light = variant == "Light" ? 0.7 : 1
                    let figures = staple.per100g.enumerated().map { index, value in
                        index == 0 || index == 1 || index == 2 ? value * light : value
                    }
                    let name = variant.isEmpty ? staple.name : "\(staple.name), \(variant.lowercased())"
                    file +=
                        "\(code),\"\(name)\",\(brand),\(staple.serving),"
                        + figures.map { String(format: "%.2f", $0) }.joined(separator: ",")
                        + ",\"\(staple.allergens)\"\n"
                }
            }
        }
        return file
    }

    /// Plain foods without a barcode, added and reviewed one at a time; the last two wait in review.
    private static func seedPlainFoods(
        _ plain: [FoodFacts], writer: OperationContext, reviewer: OperationContext, database: Database
    ) async throws {
        for (index, facts) in plain.enumerated() {
            let food = try await database.run(CreateFood(gtin: nil, facts: facts), context: writer)
            _ = try await database.run(MoveFood(id: food.id, move: .submit), context: writer)
            if index < plain.count - 2 {
                _ = try await database.run(MoveFood(id: food.id, move: .approve), context: reviewer)
            }
        }
    }
}
