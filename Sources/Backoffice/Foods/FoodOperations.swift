import BackofficePlatform
import Foundation
import PostgresNIO

extension Food: VersionedReviewed {
    package typealias Content = FoodFacts
    package static let auditTargetType = "food"
    package static let table = "foods"
    package static let alias = "f"
    package static let versionTable = "food_versions"
    package static let versionKey = "food_id"
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

/// A writer saves a new version of a food's figures (`foods.update`, `If-Match` required: 428
/// without, 412 when stale, naming who saved the current version and when). A draft takes it;
/// a published food becomes a draft again while its live version stays in the app. In review or
/// archived is 409. An expert changes only what it wrote (another's is 404).
package struct UpdateFood: AuditedOperation {
    package static let action: Action = "foods.update"
    let foodID: UUID
    let changes: FoodChanges
    let ifMatch: String?

    package init(foodID: UUID, changes: FoodChanges, ifMatch: String?) {
        (self.foodID, self.changes, self.ifMatch) = (foodID, changes, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Food> {
        let before = try await Food.forNewVersion(foodID, ifMatch: ifMatch, in: unit)
        let facts = changes.applied(to: before.facts)
        try facts.validate()
        if facts == before.facts { return .unchanged(before) }
        let version = before.version + 1
        try await facts.store(as: version, of: before.id, in: unit)
        try await Food.newVersion(version, of: before.id, in: unit)
        return try await Food.audited(Self.action, before.id, before: before, in: unit)
    }
}

/// The figures an update sends; those absent keep their value.
package struct FoodChanges: Sendable {
    package var name, brand: String?
    package var servingGrams, energyKcal, fat, saturatedFat, carbohydrates, sugars, fiber, proteins, salt: Double?
    package var allergens: [Allergen]?

    package init() {}

    func applied(to f: FoodFacts) -> FoodFacts {
        FoodFacts(
            name: name ?? f.name, brand: brand ?? f.brand, servingGrams: servingGrams ?? f.servingGrams,
            energyKcal: energyKcal ?? f.energyKcal, fat: fat ?? f.fat, saturatedFat: saturatedFat ?? f.saturatedFat,
            carbohydrates: carbohydrates ?? f.carbohydrates, sugars: sugars ?? f.sugars, fiber: fiber ?? f.fiber,
            proteins: proteins ?? f.proteins, salt: salt ?? f.salt, allergens: allergens ?? f.allergens)
    }
}
