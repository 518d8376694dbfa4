import BackofficePlatform
import Foundation
import PostgresNIO

extension Food: ListedReviewed {
    package static let auditTargetType = "food"
    package static let listAction: Action = "foods.list"
    package static let alias = "f"
    package static let table = "foods"
    package static let versionTable = "food_versions"
    package static let versionKey = "food_id"
    package static let noun = "food"

    package static func action(_ move: ReviewMove) -> Action {
        switch move {
        case .submit: "foods.submit"
        case .approve: "foods.approve"
        case .sendBack: "foods.send_back"
        case .archive: "foods.archive"
        }
    }

    /// The food as the principal may see it, locked until the unit ends with `forUpdate`.
    /// - Throws: `DomainError.notFound`, also for another writer's food when the principal sees
    ///   only what it wrote (its existence is not revealed).
    package static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Food {
        let own = unit.context.authoredOnly
        let food = try await unit.first(
            """
            SELECT \(unescaped: columns) FROM \(unescaped: source) WHERE f.id = \(id)
            AND (NOT \(own) OR f.author_id = \(unit.principal.operatorID))
            \(unescaped: forUpdate ? "FOR UPDATE OF f" : "")
            """, as: Food.self)
        guard let food else { throw DomainError.notFound("Food \(id.text)") }
        return food
    }

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
        let before = try await Food.fetch(foodID, forUpdate: true, in: unit)
        guard let ifMatch else { throw DomainError.preconditionRequired }
        try await before.check(ifMatch, in: unit)
        guard before.state == .draft || before.state == .published else {
            throw DomainError.invalidTransition(
                before.state == .inReview
                    ? "A food in review changes only after it is sent back." : "An archived food changes no more.",
                current: before.state.rawValue)
        }
        let facts = changes.applied(to: before.facts)
        try facts.validate()
        if facts == before.facts { return .unchanged(before) }
        let version = before.version + 1
        try await facts.store(as: version, of: before.id, in: unit)
        try await unit.execute(
            """
            UPDATE foods SET version = \(version), state = 'draft', updated_at = \(unit.now),
                updated_by = \(unit.principal.operatorID)
            WHERE id = \(before.id)
            """)
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
