import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension Food {
    var api: Components.Schemas.Food {
        get throws {
            let f = facts
            return Components.Schemas.Food(
                id: id.text, gtin: gtin?.description, state: try .init(known: state.rawValue), version: version,
                liveVersion: liveVersion, authorId: authorID.text, importId: importID?.text, name: f.name,
                brand: f.brand, servingGrams: f.servingGrams, energyKcal100g: f.energyKcal, fat100g: f.fat,
                saturatedFat100g: f.saturatedFat, carbohydrates100g: f.carbohydrates, sugars100g: f.sugars,
                fiber100g: f.fiber, proteins100g: f.proteins, salt100g: f.salt, allergens: try f.apiAllergens,
                reviewComment: reviewComment, submittedAt: submittedAt, publishedAt: publishedAt,
                createdAt: createdAt, updatedAt: updatedAt, updatedBy: updatedBy.text, writtenBy: writtenBy.text)
        }
    }
}

extension ReviewedVersion where Content == FoodFacts {
    var api: Components.Schemas.FoodVersion {
        get throws {
            let f = content
            return Components.Schemas.FoodVersion(
                version: version, name: f.name, brand: f.brand, servingGrams: f.servingGrams,
                energyKcal100g: f.energyKcal, fat100g: f.fat, saturatedFat100g: f.saturatedFat,
                carbohydrates100g: f.carbohydrates, sugars100g: f.sugars, fiber100g: f.fiber,
                proteins100g: f.proteins, salt100g: f.salt, allergens: try f.apiAllergens, writtenBy: writtenBy.text,
                writtenAt: writtenAt)
        }
    }
}

extension LiveFood {
    var api: Components.Schemas.LiveFood {
        get throws {
            let f = facts
            return Components.Schemas.LiveFood(
                id: id.text, gtin: gtin?.description, version: version, name: f.name, brand: f.brand,
                servingGrams: f.servingGrams, energyKcal100g: f.energyKcal, fat100g: f.fat,
                saturatedFat100g: f.saturatedFat, carbohydrates100g: f.carbohydrates, sugars100g: f.sugars,
                fiber100g: f.fiber, proteins100g: f.proteins, salt100g: f.salt, allergens: try f.apiAllergens)
        }
    }

    /// The ETag of what the app was sent: the food and its live version.
    var entityTag: String { EntityTag.digest("f", ["\(id.text):\(version)"]) }
}

extension FoodFacts {
    var apiAllergens: [Components.Schemas.Allergen] {
        get throws { try allergens.map { try .init(known: $0.rawValue) } }
    }

    /// The figures a draft sends.
    init(_ draft: Components.Schemas.FoodDraft) {
        self.init(
            name: draft.name, brand: draft.brand, servingGrams: draft.servingGrams, energyKcal: draft.energyKcal100g,
            fat: draft.fat100g, saturatedFat: draft.saturatedFat100g, carbohydrates: draft.carbohydrates100g,
            sugars: draft.sugars100g, fiber: draft.fiber100g, proteins: draft.proteins100g, salt: draft.salt100g,
            allergens: (draft.allergens ?? []).compactMap { Allergen(rawValue: $0.rawValue) })
    }
}

extension FoodChanges {
    /// The figures an update sends.
    init(_ u: Components.Schemas.FoodUpdate) {
        self.init()
        (name, brand, servingGrams, energyKcal) = (u.name, u.brand, u.servingGrams, u.energyKcal100g)
        (fat, saturatedFat, carbohydrates, sugars) = (u.fat100g, u.saturatedFat100g, u.carbohydrates100g, u.sugars100g)
        (fiber, proteins, salt) = (u.fiber100g, u.proteins100g, u.salt100g)
        allergens = u.allergens.map { $0.compactMap { Allergen(rawValue: $0.rawValue) } }
    }
}

extension APIHandler {
    func createFood(_ input: Operations.CreateFood.Input) async throws -> Operations.CreateFood.Output {
        let body: Components.Schemas.FoodDraft = try json(input.body)
        return .created(try await written(CreateFood(gtin: body.gtin, facts: FoodFacts(body)), body: body, status: 201))
    }

    func updateFood(_ input: Operations.UpdateFood.Input) async throws -> Operations.UpdateFood.Output {
        let body: Components.Schemas.FoodUpdate = try json(input.body)
        let id = try parseID(input.path.foodId, "food_id")
        return .ok(
            try await written(
                UpdateFood(id: id, changes: FoodChanges(body), ifMatch: input.headers.ifMatch), on: id, body: body))
    }

    func listFoodVersions(_ input: Operations.ListFoodVersions.Input) async throws
        -> Operations.ListFoodVersions.Output
    {
        let versions = try await read(FoodVersions(id: try parseID(input.path.foodId, "food_id")))
        return .ok(.init(body: .json(.init(items: try versions.map { try $0.api }))))
    }
}

extension APIHandler {
    func importFoods(_ input: Operations.ImportFoods.Input) async throws -> Operations.ImportFoods.Output {
        guard case .csv(let body) = input.body else { throw DomainError.inconsistent("one media type") }
        try context().permit(ImportFoods.self)  // before a byte of the file is read
        // Read as it arrives (the edge limits and screens the bytes), before any transaction.
        var reader = FoodsFileReader(format: .csv)
        let contents: RecordFileContents<FoodRow>
        do {
            for try await part in body { try reader.feed(part) }
            contents = try reader.finish()
        } catch let error as MalformedFile {
            throw ImportFoods.refusal(error)
        }
        let query = input.query
        let importFoods = ImportFoods(
            contents: contents, allOrNothing: query.allOrNothing ?? false, dryRun: query.dryRun ?? false)
        struct Fingerprint: Encodable, Sendable { let allOrNothing: Bool?, dryRun: Bool?, sha256: String }
        let report = try await changeAfterUpload(
            importFoods,
            body: Fingerprint(allOrNothing: query.allOrNothing, dryRun: query.dryRun, sha256: importFoods.sha256)
        ) { made in
            let report = made.report
            return Components.Schemas.FoodImportReport(
                importId: made.id?.text, dryRun: report.dryRun, allOrNothing: report.allOrNothing,
                rows: report.rows, created: report.created, rejected: report.rejected,
                errors: report.issues.map {
                    .init(line: $0.line, gtin: $0.key, field: $0.field, code: $0.code, message: $0.message)
                })
        }
        return .ok(.init(body: .json(report)))
    }

    func approveFoodImport(_ input: Operations.ApproveFoodImport.Input) async throws
        -> Operations.ApproveFoodImport.Output
    {
        let id = try parseID(input.path.importId, "import_id")
        let approval = try await change(ApproveFoodImport(importID: id), on: id, body: String?.none) {
            Components.Schemas.FoodImportApproval(importId: id.text, approved: $0)
        }
        return .ok(.init(body: .json(approval)))
    }

    func getFoodByBarcode(_ input: Operations.GetFoodByBarcode.Input) async throws
        -> Operations.GetFoodByBarcode.Output
    {
        let food = try await read(FoodByBarcode(gtin: input.path.gtin))
        let etag = food.entityTag
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(.init(headers: .init(eTag: etag), body: .json(try food.api)))
    }

    func searchFoods(_ input: Operations.SearchFoods.Input) async throws -> Operations.SearchFoods.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.textAndID(input.query.cursor).map { (name: $0.text, id: $0.id) }
        let foods = try await read(SearchFoods(text: input.query.q, after: after, limit: limit + 1))
        let (items, next) = keysetPage(foods, limit: limit) { [$0.facts.name.lowercased(), $0.id.text] }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }
}
