import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Plans {
    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A YAML or JSON plan file (fields as the API's PlanDraft: request_id, note, days or weeks).")
        var file: String

        func run() async throws {
            try await global.show(.single(CLIColumns.plan)) { client in
                let draft = try readStructuredFile(Components.Schemas.PlanDraft.self, at: file)
                return try await client.createPlan(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(draft))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Plan id.") var id: String
        @Option(help: "A YAML or JSON file with the new version (as the API's PlanContent: note, days or weeks).")
        var file: String
        @Option(help: "Only if the plan is still at this version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.plan)) { client in
                let content = try readStructuredFile(Components.Schemas.PlanContent.self, at: file)
                let version = try await currentVersion(ifMatch, await client.getPlan(path: .init(planId: id)))
                return try await client.updatePlan(
                    path: .init(planId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: version),
                    body: .json(content))
            }
        }
    }
}
