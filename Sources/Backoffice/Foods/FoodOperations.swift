import BackofficePlatform
import Foundation
import PostgresNIO

extension Food: VersionedReviewed, WrittenReviewed {
    package typealias Content = FoodFacts
    package var written: FoodFacts { facts }
    package static let alias = "f"
    package static let noun = "food"

    /// What the audit event keeps of a food: where it stands and what it is called (the versions keep the figures).
    package var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let gtin: String?, state: String, version: Int, liveVersion: Int?, name: String
            }
            return try AuditRecord.json(
                Snapshot(
                    gtin: gtin?.digits, state: state.rawValue, version: version, liveVersion: liveVersion,
                    name: facts.name))
        }
    }
}

/// A food reviewed as the experts' content is (`foods.submit`, `.approve`, `.send_back`, `.archive`).
package typealias MoveFood = MoveReviewed<Food>

/// An expert or a manager adds a food (`foods.create`): a draft, version 1. A barcode that is
/// not a GTIN is 422 (naming why); one a food not archived already has is 409 `barcode_taken`.
package struct CreateFood: AuditedOperation {
    package static let action: Action = "foods.create"
    let gtin: String?
    let facts: FoodFacts

    package init(gtin: String?, facts: FoodFacts) {
        self.gtin = gtin.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        self.facts = facts
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Food> {
        var validation = Validation()
        var barcode: GTIN?
        if let gtin {
            do { barcode = try GTIN(validating: gtin) } catch {
                validation.require(false, "gtin", error.rawValue, error.message)
            }
        }
        facts.validate(into: &validation)
        try validation.check()
        let id = unit.newID()
        let writer = unit.principal.operatorID
        let inserted = try await unit.first(
            """
            INSERT INTO foods (id, gtin, author_id, state, version, created_at, updated_at, updated_by)
            VALUES (\(id), \(barcode?.digits), \(writer), 'draft', 1, \(unit.now), \(unit.now), \(writer))
            ON CONFLICT (gtin) WHERE state <> 'archived' DO NOTHING RETURNING id
            """
        ) { try $0.decode(UUID.self) }
        guard inserted != nil else {
            throw DomainError.conflict(
                code: "barcode_taken", detail: "A food with the barcode \(barcode?.description ?? "") exists.")
        }
        try await facts.store(as: 1, of: id, in: unit)
        return try await Food.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A writer saves a new version of a food's figures (`foods.update`), as articles' writers do;
/// the barcode never changes.
package typealias UpdateFood = UpdateReviewed<Food, FoodChanges>

/// The figures an update sends; those absent keep their value.
package struct FoodChanges: ContentChanges {
    package var name, brand: String?
    package var servingGrams, energyKcal, fat, saturatedFat, carbohydrates, sugars, fiber, proteins, salt: Double?
    package var allergens: [Allergen]?

    package init() {}

    package func applied(to f: FoodFacts) -> FoodFacts {
        FoodFacts(
            name: name ?? f.name, brand: brand ?? f.brand, servingGrams: servingGrams ?? f.servingGrams,
            energyKcal: energyKcal ?? f.energyKcal, fat: fat ?? f.fat, saturatedFat: saturatedFat ?? f.saturatedFat,
            carbohydrates: carbohydrates ?? f.carbohydrates, sugars: sugars ?? f.sugars, fiber: fiber ?? f.fiber,
            proteins: proteins ?? f.proteins, salt: salt ?? f.salt, allergens: allergens ?? f.allergens)
    }
}
