import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Goods {
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
