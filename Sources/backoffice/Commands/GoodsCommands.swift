import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Goods {
    /// The fields both create and update take.
    struct Fields: ParsableArguments {
        @Option(help: "Name (at most 200 characters).") var name: String?
        @Option(help: "Description (at most 5,000 characters).") var description: String?
        @Option(help: "Category slug (lower-case letters, digits, dashes).") var category: String?
        @Option(help: "Price in US cents.") var priceCents: Int64?
        @Option(help: "Price in FitPoints.") var priceFitpoints: Int64?
        @Option(help: "Units in stock.") var stock: Int64?
        @Option(help: "An https image URL (repeatable; replaces the list on update).") var imageURL: [String] = []
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Stock-keeping unit, unique in your shop.") var sku: String
        @OptionGroup(title: "Fields") var fields: Fields

        func run() async throws {
            try await global.show(.single(CLIColumns.good)) { client in
                guard let name = fields.name, let category = fields.category else {
                    throw CLIFailure.usage("error: --name and --category are required")
                }
                return try await client.createGood(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            sku: sku, name: name, description: fields.description, category: category,
                            priceCents: fields.priceCents,
                            priceFitpoints: fields.priceFitpoints, stock: fields.stock ?? 0,
                            imageUrls: fields.imageURL.isEmpty ? nil : fields.imageURL)))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Good id.") var id: String
        @OptionGroup(title: "Fields") var fields: Fields
        @Option(help: "draft, active or archived.") var status: Components.Schemas.GoodStatus?
        @Option(help: "Only if the good is still at this ETag/version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.good)) { client in
                var version = ifMatch
                if version == nil { version = try await Self.currentVersion(of: id, client) }
                return try await client.updateGood(
                    path: .init(goodId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: version),
                    body: .json(
                        .init(
                            name: fields.name, description: fields.description, category: fields.category,
                            priceCents: fields.priceCents,
                            priceFitpoints: fields.priceFitpoints, stock: fields.stock, status: status,
                            imageUrls: fields.imageURL.isEmpty ? nil : fields.imageURL)))
            }
        }

        /// The good's ETag now (its read's problem, such as 404, fails the command as usual).
        static func currentVersion(of id: String, _ client: Client) async throws -> String? {
            try answered(try await client.getGood(path: .init(goodId: id))).ok.headers.eTag
        }
    }

    struct Import: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "The file (.csv, or .jsonl/.ndjson).") var file: String
        @Option(help: "csv or jsonl (default: from the file's extension).") var format: GoodsFormat?
        @Flag(help: "Import nothing if any row has an error.") var allOrNothing = false
        @Flag(help: "Report what would change; change nothing.") var dryRun = false

        func run() async throws {
            let format = format ?? (file.hasSuffix(".jsonl") || file.hasSuffix(".ndjson") ? .jsonl : .csv)
            let body = try Transfer.upload(file)
            var rejected = 0
            try await global.show(.rows(key: "errors", ["line", "sku", "field", "code", "message"])) { client in
                let output = try await client.importGoods(
                    query: .init(allOrNothing: allOrNothing, dryRun: dryRun),
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: format == .jsonl ? .applicationXNdjson(body) : .csv(body))
                if case .ok(let ok) = output { rejected = (try? ok.body.json.rejected) ?? 0 }
                return output
            }
            if rejected > 0 { throw ExitCode(6) }
        }
    }

    struct Export: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "csv (default) or jsonl.") var format: GoodsFormat = .csv
        @Option(help: "Only goods in this status.") var status: Components.Schemas.GoodStatus?
        @Option(help: "Write to this file instead of stdout.") var file: String?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().exportGoods(
                    query: .init(format: format == .jsonl ? .jsonl : .csv, status: status))
                let ok = try answered(output).ok
                switch ok.body {
                case .csv(let body):
                    try await Transfer.download(body, to: file, counting: "goods", skippingHeaderLine: true)
                case .applicationXNdjson(let body): try await Transfer.download(body, to: file, counting: "goods")
                }
            }
        }
    }
}

/// The file formats of goods import and export.
enum GoodsFormat: String, ExpressibleByArgument, CaseIterable { case csv, jsonl }
