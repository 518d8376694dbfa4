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
    /// proteins, salt) and allergens.
    struct DemoFood {
        let name: String
        let figures: [Double]
        let allergens: String
        let serving: Double

        init(_ name: String, _ figures: [Double], _ allergens: String, serving: Double) {
            (self.name, self.figures, self.allergens, self.serving) = (name, figures, allergens, serving)
        }
    }

    static let staples = [
        DemoFood(
            "Rolled oats", [372, 7, 1.2, 58.7, 1, 10, 13.5, 0.01], "en:gluten", serving: 40),
        DemoFood(
            "Wholegrain bread", [247, 3.4, 0.7, 41, 4.3, 7, 13, 1], "en:gluten", serving: 36),
        DemoFood(
            "Greek yoghurt", [97, 5, 3.3, 3.6, 3.6, 0, 9, 0.1], "en:milk", serving: 150),
        DemoFood(
            "Semi-skimmed milk", [47, 1.6, 1, 4.8, 4.8, 0, 3.4, 0.1], "en:milk", serving: 200),
        DemoFood(
            "Cheddar cheese", [416, 34.9, 21.7, 0.1, 0.1, 0, 25.4, 1.8], "en:milk",
            serving: 30),
        DemoFood(
            "Peanut butter", [588, 50, 10, 14, 9, 6, 25, 1.1], "en:peanuts", serving: 20),
        DemoFood(
            "Almonds", [579, 49.9, 3.8, 9.1, 4.4, 12.5, 21.2, 0], "en:nuts", serving: 30),
        DemoFood(
            "Dark chocolate", [546, 31, 19, 46, 24, 7, 4.9, 0.02], "en:milk,en:soybeans",
            serving: 20),
        DemoFood(
            "Granola", [471, 20, 3.6, 60, 24, 7, 10, 0.5], "en:gluten,en:nuts", serving: 45),
        DemoFood(
            "Tuna in water", [116, 0.8, 0.2, 0, 0, 0, 26, 0.8], "en:fish", serving: 112),
        DemoFood(
            "Hummus", [166, 9.6, 1.4, 14.3, 0.3, 6, 7.9, 0.9], "en:sesame-seeds", serving: 30),
        DemoFood(
            "Tofu", [144, 8.7, 1.3, 2.8, 0.6, 2.3, 15.8, 0.03], "en:soybeans", serving: 100),
        DemoFood("Basmati rice", [349, 0.6, 0.2, 77, 0.2, 1.3, 8.1, 0.01], "", serving: 75),
        DemoFood(
            "Wholewheat pasta", [348, 2.5, 0.4, 64, 3.5, 9, 13, 0.01], "en:gluten",
            serving: 75),
        DemoFood("Lentils", [352, 1.1, 0.2, 63, 2, 10.7, 24.6, 0.01], "", serving: 60),
        DemoFood("Chickpeas", [119, 2.6, 0.3, 16, 0.4, 5.3, 7, 0.6], "", serving: 120),
        DemoFood(
            "Tomato soup", [42, 1.6, 0.3, 5.8, 4.1, 0.7, 0.9, 0.7], "en:celery", serving: 300),
        DemoFood("Orange juice", [45, 0.2, 0, 10.4, 8.4, 0.2, 0.7, 0], "", serving: 250),
        DemoFood(
            "Protein bar", [380, 12, 6, 33, 4, 12, 33, 0.5], "en:milk,en:soybeans,en:nuts",
            serving: 60),
        DemoFood("Rice cakes", [387, 2.8, 0.6, 81, 0.9, 4.2, 8.2, 0.1], "", serving: 9),
        DemoFood("Sparkling water", [0, 0, 0, 0, 0, 0, 0, 0.01], "", serving: 330),
        DemoFood("Smoked salmon", [184, 10, 1.6, 0, 0, 0, 23, 3], "en:fish", serving: 50),
        DemoFood(
            "Egg noodles", [384, 4.4, 1, 71, 2, 3.3, 14, 0.1], "en:gluten,en:eggs",
            serving: 75),
        DemoFood(
            "Mustard", [66, 3.3, 0.2, 5.8, 0.9, 3.3, 4.4, 5.7], "en:mustard", serving: 5),
        DemoFood(
            "Muesli", [363, 6, 1, 63, 15, 8, 10, 0.1], "en:gluten,en:nuts", serving: 45),
    ]
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
        let found = try await database.transaction(for: .system) { connection in
            let foods = try await firstRow("SELECT count(*) FROM foods", on: connection, logger: database.logger) {
                try $0.decode(Int.self)
            }
            let people = try await operators(
                [experts[0], "manager@healthtrack.example"], on: connection, database: database)
            return (foods ?? 0, people)
        }
        guard found.0 == 0, let expert = found.1[experts[0]], let manager = found.1["manager@healthtrack.example"]
        else { return }
        let context = OperationContext.system("demo-foods", policies: policies)
        let writer = context.acting(as: principal(expert))
        let reviewer = context.acting(as: principal(manager))
        let contents = try FoodsFileReader.read(Array(foodsFile().utf8), format: .csv)
        let imported = try await database.run(
            ImportFoods(contents: contents, allOrNothing: true, dryRun: false), context: writer)
        if let id = imported.id { _ = try await database.run(ApproveFoodImport(importID: id), context: reviewer) }
        try await seedPlainFoods(writer: writer, reviewer: reviewer, database: database)
    }

    /// The 5,000 packaged foods as a file in Open Food Facts' columns.
    static func foodsFile() -> String {
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
                    let figures = staple.figures.enumerated().map { index, value in
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
    private static func seedPlainFoods(writer: OperationContext, reviewer: OperationContext, database: Database)
        async throws
    {
        let plain: [FoodFacts] = [
            FoodFacts(
                name: "Apple", servingGrams: 180, energyKcal: 52, fat: 0.2, carbohydrates: 13.8, sugars: 10.4,
                fiber: 2.4, proteins: 0.3,
                salt: 0),
            FoodFacts(
                name: "Banana", servingGrams: 120, energyKcal: 89, fat: 0.3, carbohydrates: 22.8, sugars: 12.2,
                fiber: 2.6, proteins: 1.1,
                salt: 0),
            FoodFacts(
                name: "Egg", servingGrams: 50, energyKcal: 143, fat: 9.5, saturatedFat: 3.1, carbohydrates: 0.7,
                sugars: 0.4,
                proteins: 12.6, salt: 0.36, allergens: [.eggs]),
            FoodFacts(
                name: "Chicken breast, raw", servingGrams: 150, energyKcal: 120, fat: 2.6, saturatedFat: 0.6,
                carbohydrates: 0,
                proteins: 22.5, salt: 0.15),
            FoodFacts(
                name: "Olive oil", servingGrams: 10, energyKcal: 884, fat: 100, saturatedFat: 13.8, carbohydrates: 0,
                proteins: 0, salt: 0
            ),
            FoodFacts(
                name: "Broccoli", servingGrams: 80, energyKcal: 34, fat: 0.4, carbohydrates: 6.6, sugars: 1.7,
                fiber: 2.6, proteins: 2.8,
                salt: 0.08),
            FoodFacts(
                name: "Sweet potato", servingGrams: 150, energyKcal: 86, fat: 0.1, carbohydrates: 20.1, sugars: 4.2,
                fiber: 3,
                proteins: 1.6, salt: 0.14),
            FoodFacts(
                name: "Spinach", servingGrams: 30, energyKcal: 23, fat: 0.4, carbohydrates: 3.6, sugars: 0.4,
                fiber: 2.2, proteins: 2.9,
                salt: 0.2),
            FoodFacts(
                name: "Blueberries", servingGrams: 80, energyKcal: 57, fat: 0.3, carbohydrates: 14.5, sugars: 10,
                fiber: 2.4,
                proteins: 0.7, salt: 0),
            FoodFacts(
                name: "Avocado", servingGrams: 100, energyKcal: 160, fat: 14.7, saturatedFat: 2.1, carbohydrates: 8.5,
                sugars: 0.7,
                fiber: 6.7, proteins: 2, salt: 0.02),
        ]
        for (index, facts) in plain.enumerated() {
            let food = try await database.run(CreateFood(gtin: nil, facts: facts), context: writer)
            _ = try await database.run(MoveFood(id: food.id, move: .submit), context: writer)
            if index < plain.count - 2 {
                _ = try await database.run(MoveFood(id: food.id, move: .approve), context: reviewer)
            }
        }
    }
}
