import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Moderation {
    struct Decide: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Case id.") var id: String
        @Option(help: "dismiss, remove, warn or lock.") var decision:
            Components.Schemas.ModerationDecisionCreate
                .DecisionPayload
        @Option(help: "A ground of policies/moderation/policy.yaml.") var ground: String
        @Option(help: "What the author reads in the statement of reasons.") var explanation: String
        @Option(help: "For lock, RFC 3339: when it lifts itself.") var until: String?
        @Option(help: "The case's version you read (moderation show).") var version: Int

        func run() async throws {
            try await global.show(.single(CLIColumns.statement)) {
                try await $0.decideModerationCase(
                    path: .init(caseId: id),
                    headers: .init(idempotencyKey: global.changeKey(), ifMatch: "\"\(version)\""),
                    body: .json(
                        .init(
                            decision: decision, ground: ground, explanation: explanation,
                            lockUntil: try parseTime(until, "--until"))))
            }
        }
    }

    struct Offenders: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Upheld cases (1–100).") var upheldCases: Int
        @Option(help: "Within this many days (1–365).") var days: Int
        @Flag(help: "Save it (after a dry run).") var save = false

        func run() async throws {
            let threshold = Components.Schemas.OffenderThreshold(upheldCases: upheldCases, days: days)
            if save {
                try await global.show(.single(["upheld_cases", "days"])) {
                    try await $0.setOffenderThreshold(body: .json(threshold))
                }
            } else {
                try await global.show(
                    .single(["days", "proposed", "flagged_authors", "current", "currently_flagged_authors"])
                ) {
                    try await $0.dryRunOffenderThreshold(body: .json(threshold))
                }
            }
        }
    }
}

extension Components.Schemas.ModerationDecisionCreate.DecisionPayload: ExpressibleByArgument {}
