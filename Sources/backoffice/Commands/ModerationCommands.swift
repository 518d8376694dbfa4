import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Moderation {
    struct Decide: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decide a case; prints its statement of reasons.",
            discussion: """
                Decisions: dismiss (ground none), remove, warn (removes too), lock (removes, and locks the author). \
                Grounds: respect, safety, health_claims, spam, privacy, explicit, none.

                --version is the case's version you read (`moderation show` prints it): a case that changed since \
                (a new text, new reports) is refused (exit 5, 412) so you decide on what it says now.

                Example: backoffice moderation decide 3f9a… --version 2 --decision lock --ground respect \
                --explanation "Insulted another member after two warnings"
                """)
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

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Statements of reasons as JSON lines, streamed (transparency reports).",
            discussion: """
                Example: backoffice moderation export --since 2026-01-01T00:00:00Z --until 2026-07-01T00:00:00Z \
                --file statements-2026-h1.jsonl
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "RFC 3339: decisions at or after (default: 30 days ago).") var since: String?
        @Option(help: "RFC 3339: decisions before (default: now).") var until: String?
        @Option(help: "Write to this file instead of stdout.") var file: String?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().exportStatementsOfReasons(
                    query: .init(since: try parseTime(since, "--since"), until: try parseTime(until, "--until")))
                let ok = try answered(output).ok
                try await Transfer.download(try ok.body.applicationJsonl, to: file, counting: "statements")
            }
        }
    }

    struct Offenders: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The repeat-offender threshold: try it over the past 90 days, then save it.",
            discussion: """
                An author with N upheld cases within D days is flagged in the queue and on the account page, never \
                locked automatically. Without --save, a dry run: how many authors it would flag, beside the \
                threshold in force.

                Example: backoffice moderation offenders --upheld-cases 4 --days 60
                """)
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
