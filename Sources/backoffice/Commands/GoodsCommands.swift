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
}

/// The file formats of goods import.
enum GoodsFormat: String, ExpressibleByArgument, CaseIterable { case csv, jsonl }
