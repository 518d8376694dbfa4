import BackofficePlatform
import Foundation
import PostgresNIO

/// An entry of the food database (the app's "Product Calorie Record"): a product with its
/// barcode, or a plain food (an apple) without one, and its figures per 100 g. Written as
/// versions and reviewed as the experts' other content is; the app reads the live version.
/// The barcode names the product and never changes: a different barcode is a different food.
package struct Food: Sendable, Equatable, HoldsReviewStatus {
    package var review: ReviewStatus
    package var gtin: GTIN?
    /// The import the food came in with, if it did.
    package var importID: UUID?
    /// The newest version's figures, and who wrote them.
    package var facts: FoodFacts
    package var writtenBy: UUID
}

/// The allergens a label must name (EU Regulation 1169/2011, Annex II), by Open Food Facts' tags.
package enum Allergen: String, Sendable, CaseIterable, Codable {
    case gluten, crustaceans, eggs, fish, peanuts, soybeans, milk, nuts, celery, mustard
    case sesameSeeds = "sesame-seeds"
    case sulphites = "sulphur-dioxide-and-sulphites"
    case lupin, molluscs
}

/// What one version of a food says: its name, brand, serving, and energy and nutrients per
/// 100 g (grams; energy in kcal). A nutrient not known is nil, never zero: a recipe that uses
/// the food says its figure is incomplete rather than low.
package struct FoodFacts: Sendable, Equatable, Codable {
    package var name: String
    package var brand: String?
    /// One serving, in grams.
    package var servingGrams: Double?
    package var energyKcal: Double
    package var fat: Double?
    package var saturatedFat: Double?
    package var carbohydrates: Double?
    package var sugars: Double?
    package var fiber: Double?
    package var proteins: Double?
    package var salt: Double?
    package var allergens: [Allergen]

    /// The figures as given: texts trimmed, numbers to 0.01, allergens in the list's order once each.
    package init(
        name: String, brand: String? = nil, servingGrams: Double? = nil, energyKcal: Double, fat: Double? = nil,
        saturatedFat: Double? = nil, carbohydrates: Double? = nil, sugars: Double? = nil, fiber: Double? = nil,
        proteins: Double? = nil, salt: Double? = nil, allergens: [Allergen] = []
    ) {
        func hundredths(_ value: Double?) -> Double? { value.map { ($0 * 100).rounded() / 100 } }
        self.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        self.brand = brand.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        self.servingGrams = hundredths(servingGrams)
        self.energyKcal = hundredths(energyKcal) ?? 0
        (self.fat, self.saturatedFat) = (hundredths(fat), hundredths(saturatedFat))
        (self.carbohydrates, self.sugars, self.fiber) = (
            hundredths(carbohydrates), hundredths(sugars), hundredths(fiber)
        )
        (self.proteins, self.salt) = (hundredths(proteins), hundredths(salt))
        self.allergens = Allergen.allCases.filter(allergens.contains)
    }

    /// The nutrients by field name, as the contract and the import name them.
    var nutrients: [(field: String, grams: Double?)] {
        [
            ("fat_100g", fat), ("saturated_fat_100g", saturatedFat), ("carbohydrates_100g", carbohydrates),
            ("sugars_100g", sugars), ("fiber_100g", fiber), ("proteins_100g", proteins), ("salt_100g", salt),
        ]
    }

    /// The rules of a food's figures, each broken one named: energy 0–900 kcal (pure fat is 900),
    /// each nutrient 0–100 g, saturated fat within fat, sugars within carbohydrates, and fat,
    /// carbohydrates, proteins, fiber and salt together at most 100 g (to 0.5 g, for rounding on labels).
    package func validate(into validation: inout Validation) {
        validation.text(name, "name", max: 200)
        validation.text(brand, "brand", max: 120, required: false)
        if let servingGrams {
            validation.require(
                servingGrams > 0 && servingGrams <= 5_000, "serving_grams", "out_of_range",
                "must be over 0 and at most 5000")
        }
        validation.require(
            energyKcal.isFinite && (0...900).contains(energyKcal), "energy_kcal_100g", "out_of_range",
            "must be 0–900 kcal per 100 g")
        for (field, grams) in nutrients {
            guard let grams else { continue }
            validation.require(
                grams.isFinite && (0...100).contains(grams), field, "out_of_range", "must be 0–100 g per 100 g")
        }
        if let fat, let saturatedFat {
            validation.require(saturatedFat <= fat, "saturated_fat_100g", "over_fat", "cannot exceed fat")
        }
        if let carbohydrates, let sugars {
            validation.require(
                sugars <= carbohydrates, "sugars_100g", "over_carbohydrates", "cannot exceed carbohydrates")
        }
        let mass = [fat, carbohydrates, proteins, fiber, salt].compactMap { $0 }.reduce(0, +)
        validation.require(
            mass <= 100.5, "carbohydrates_100g", "over_100g",
            "fat, carbohydrates, proteins, fiber and salt add up to over 100 g per 100 g")
    }

    /// Refuses figures that break a rule, naming each field.
    func validate() throws {
        var validation = Validation()
        validate(into: &validation)
        try validation.check()
    }
}

/// How foods are stored (`foods` with its newest version from `food_versions`; platform sessions only).
extension Food: RowDecodable {
    package static let columns =
        "\(ReviewStatus.columns("f")), f.gtin, f.import_id, v.written_by, \(FoodFacts.columns)"
    /// The foods with their newest version (alias `f`, the version `v`).
    package static let source = "foods f JOIN food_versions v ON v.food_id = f.id AND v.version = f.version"

    package init(row: PostgresRow) throws {
        let cells = row.makeRandomAccess()
        let n = ReviewStatus.count
        self.init(
            review: try ReviewStatus(row: row), gtin: try cells[n].decode(String?.self).flatMap(GTIN.init),
            importID: try cells[n + 1].decode(UUID?.self), facts: try FoodFacts(cells, from: n + 3),
            writtenBy: try cells[n + 2].decode(UUID.self))
    }
}

extension FoodFacts: VersionContent, WrittenContent {
    package func check(in unit: UnitOfWork) async throws { try validate() }

    /// A version's figures (alias `v`), as `init(_:from:)` reads them.
    package static let columns = """
        v.name, v.brand, v.serving_grams, v.energy_kcal, v.fat, v.saturated_fat, v.carbohydrates, v.sugars, \
        v.fiber, v.proteins, v.salt, v.allergens
        """

    /// The figures in `cells` from `start` on, in the order of `columns`.
    package init(_ cells: PostgresRandomAccessRow, from start: Int) throws {
        func grams(_ offset: Int) throws -> Double? { try cells[start + offset].decode(Double?.self) }
        self.init(
            name: try cells[start].decode(String.self), brand: try cells[start + 1].decode(String?.self),
            servingGrams: try grams(2), energyKcal: try cells[start + 3].decode(Double.self), fat: try grams(4),
            saturatedFat: try grams(5), carbohydrates: try grams(6), sugars: try grams(7), fiber: try grams(8),
            proteins: try grams(9), salt: try grams(10),
            allergens: try cells[start + 11].decode([String].self).compactMap(Allergen.init(rawValue:)))
    }

    /// Adds version `version` of food `id` with these figures, written by the principal now.
    package func store(as version: Int, of id: UUID, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            INSERT INTO food_versions (food_id, version, name, brand, serving_grams, energy_kcal, fat, saturated_fat,
                carbohydrates, sugars, fiber, proteins, salt, allergens, written_by, written_at)
            VALUES (\(id), \(version), \(name), \(brand), \(servingGrams), \(energyKcal), \(fat), \(saturatedFat),
                \(carbohydrates), \(sugars), \(fiber), \(proteins), \(salt), \(allergens.map(\.rawValue)),
                \(unit.principal.operatorID), \(unit.now))
            """)
    }
}
