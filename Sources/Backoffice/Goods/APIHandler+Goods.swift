import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension Good {
    var api: Components.Schemas.Good {
        get throws {
            Components.Schemas.Good(
                id: id.text, tenantId: tenantID.text, sku: sku, name: fields.name, description: fields.description,
                category: fields.category, priceCents: fields.priceCents, priceFitpoints: fields.priceFitPoints,
                stock: fields.stock, status: try .init(known: status.rawValue), imageUrls: fields.imageURLs,
                createdAt: createdAt, updatedAt: updatedAt, version: version)
        }
    }
}

extension APIHandler {
    func createGood(_ input: Operations.CreateGood.Input) async throws -> Operations.CreateGood.Output {
        let body: Components.Schemas.GoodDraft = try json(input.body)
        let fields = GoodFields(
            name: body.name, description: body.description, category: body.category, priceCents: body.priceCents,
            priceFitPoints: body.priceFitpoints, stock: body.stock, imageURLs: body.imageUrls)
        let good = try await change(
            CreateGood(sku: body.sku, fields: fields), body: body,
            status: 201
        ) { try $0.api }
        return .created(.init(headers: .init(eTag: EntityTag.of(good.version)), body: .json(good)))
    }

    func listGoods(_ input: Operations.ListGoods.Input) async throws -> Operations.ListGoods.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.textAndID(input.query.cursor).map { (sku: $0.text, id: $0.id) }
        let status = try input.query.status.map { try Good.Status(known: $0.rawValue) }
        let goods = try await read(
            ListGoods(status: status, category: input.query.category, after: after, limit: limit + 1))
        let (items, next) = keysetPage(goods, limit: limit) { [$0.sku, $0.id.text] }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getGood(_ input: Operations.GetGood.Input) async throws -> Operations.GetGood.Output {
        let good = try await read(GetGood(id: try parseID(input.path.goodId, "good_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(good.version)), body: .json(try good.api)))
    }

    func updateGood(_ input: Operations.UpdateGood.Input) async throws -> Operations.UpdateGood.Output {
        let body: Components.Schemas.GoodUpdate = try json(input.body)
        let id = try parseID(input.path.goodId, "good_id")
        let changes = GoodChanges(
            name: body.name, description: body.description, category: body.category, priceCents: body.priceCents,
            priceFitPoints: body.priceFitpoints, stock: body.stock,
            status: try body.status.map { try Good.Status(known: $0.rawValue) },
            imageURLs: body.imageUrls)
        let good = try await change(
            UpdateGood(goodID: id, changes: changes, ifMatch: input.headers.ifMatch), on: id, body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(good.version)), body: .json(good)))
    }

    func archiveGood(_ input: Operations.ArchiveGood.Input) async throws -> Operations.ArchiveGood.Output {
        let id = try parseID(input.path.goodId, "good_id")
        let good = try await change(
            ArchiveGood(goodID: id, ifMatch: input.headers.ifMatch), on: id, body: String?.none
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(good.version)), body: .json(good)))
    }

    func browseCatalog(_ input: Operations.BrowseCatalog.Input) async throws -> Operations.BrowseCatalog.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.textAndID(input.query.cursor).map { (name: $0.text, id: $0.id) }
        let items = try await read(
            BrowseCatalog(category: input.query.category, search: input.query.q, after: after, limit: limit + 1))
        let (page, next) = keysetPage(items, limit: limit) { [$0.good.name, $0.good.id.text] }
        return .ok(
            .init(
                body: .json(
                    .init(
                        items: page.map { item in
                            let good = item.good
                            return .init(
                                id: good.id.text, partnerId: good.tenantID.text, partnerName: item.partnerName,
                                sku: good.sku, name: good.name,
                                description: good.description, category: good.category, priceCents: good.priceCents,
                                priceFitpoints: good.priceFitPoints, inStock: good.stock > 0, imageUrls: good.imageURLs)
                        }, nextCursor: next))))
    }
}

extension APIHandler {
    func importGoods(_ input: Operations.ImportGoods.Input) async throws -> Operations.ImportGoods.Output {
        let (format, body): (RecordFileFormat, HTTPBody) =
            switch input.body {
            case .csv(let body): (.csv, body)
            case .applicationXNdjson(let body): (.jsonl, body)
            }
        try context().permit(ImportGoods.self)  // before a byte of the file is read
        // Read as it arrives (the edge limits and screens the bytes), before any transaction.
        var reader = GoodsFileReader(format: format)
        let contents: RecordFileContents<GoodRow>
        do {
            for try await part in body { try reader.feed(part) }
            contents = try reader.finish()
        } catch let error as MalformedFile {
            throw ImportGoods.refusal(error, format: format)
        }
        let query = input.query
        let importGoods = ImportGoods(
            contents: contents, format: format, allOrNothing: query.allOrNothing ?? false, dryRun: query.dryRun ?? false
        )
        let report = try await changeAfterUpload(
            importGoods,
            body: ImportFingerprint(
                format: format.rawValue, allOrNothing: query.allOrNothing, dryRun: query.dryRun,
                sha256: importGoods.sha256)
        ) { report in
            Components.Schemas.ImportReport(
                dryRun: report.dryRun, allOrNothing: report.allOrNothing, rows: report.rows, created: report.created,
                updated: report.updated,
                rejected: report.rejected,
                errors: report.issues.map {
                    .init(line: $0.line, sku: $0.key, field: $0.field, code: $0.code, message: $0.message)
                })
        }
        return .ok(.init(body: .json(report)))
    }

    /// What an import's Idempotency-Key is fingerprinted with: its options and the file's digest.
    private struct ImportFingerprint: Encodable, Sendable {
        let format: String
        let allOrNothing: Bool?
        let dryRun: Bool?
        let sha256: String
    }

    func exportGoods(_ input: Operations.ExportGoods.Input) async throws -> Operations.ExportGoods.Output {
        let format: RecordFileFormat = input.query.format == .jsonl ? .jsonl : .csv
        let status = try input.query.status.map { try Good.Status(known: $0.rawValue) }
        // The first page in the request (a refusal is answered before any byte); the rest as the client takes them.
        let category = input.query.category
        let first = try await read(ExportGoods(status: status, category: category, after: nil))
        let pages = try ExportGoods.pages(
            first: first, status: status, category: category, format: format, database: database,
            context: try context())
        let body = HTTPBody(pages, length: .unknown, iterationBehavior: .single)
        return .ok(.init(body: format == .csv ? .csv(body) : .applicationXNdjson(body)))
    }
}

extension APIHandler {
    /// A bulk archive of the shop's goods (`BulkGoodsArchive`): each good's outcome, in the order asked.
    func archiveGoodsInBulk(_ input: Operations.ArchiveGoodsInBulk.Input) async throws
        -> Operations.ArchiveGoodsInBulk.Output
    {
        let body: Components.Schemas.BulkGoodsArchiveRequest = try json(input.body)
        let bulk = BulkGoodsArchive(goodIDs: try parseIDs(body.goodIds, "good_ids"), dryRun: body.dryRun)
        return .ok(.init(body: .json(try await bulkResult(bulk))))
    }
}
