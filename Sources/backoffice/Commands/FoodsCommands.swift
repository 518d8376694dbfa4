import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Foods {
    struct Import: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "The file (.csv, or tab-separated .tsv), in Open Food Facts' column names.") var file: String
        @Flag(help: "Import nothing if any row has an error.") var allOrNothing = false
        @Flag(help: "Report what would change; change nothing.") var dryRun = false

        func run() async throws {
            let body = try Transfer.upload(file)
            var rejected = 0
            try await global.show(.rows(key: "errors", ["line", "gtin", "field", "code", "message"])) { client in
                let output = try await client.importFoods(
                    query: .init(allOrNothing: allOrNothing, dryRun: dryRun),
                    headers: .init(idempotencyKey: global.changeKey()), body: .csv(body))
                if case .ok(let ok) = output { rejected = (try? ok.body.json.rejected) ?? 0 }
                return output
            }
            if rejected > 0 { throw ExitCode(6) }
        }
    }
}
