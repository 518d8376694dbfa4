import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation

let ruleColumns = ["rule_id", "metric", "points_per_unit", "daily_cap", "min_intensity"]
let simulationColumns = ["rule_id", "metric", "events", "customers", "points", "current_points"]

extension FitPoints {
    struct Rules: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Earning rules: show the rules in force, set new ones from a YAML or JSON file (with a dry run first).",
            discussion:
                "Example: backoffice fitpoints rules set policies/fitpoints/earning-rules.yaml --dry-run --days 30",
            subcommands: [Show.self, Set.self])

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    """
                    The earning rules in force: points per unit of each metric with its daily cap, per badge, per \
                    event.
                    """,
                discussion: "Example: backoffice fitpoints rules show --output json")
            @OptionGroup(title: "Global Options") var global: GlobalOptions

            func run() async throws {
                try await global.show(.rows(key: "metrics", ruleColumns)) { try await $0.getEarningRules() }
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    """
                    Set the next version of the earning rules from a file; --dry-run shows what they would have \
                    paid instead.
                    """,
                discussion: """
                    The file (YAML or JSON) has `metrics` (metric, points_per_unit, daily_cap, min_intensity), \
                    `badges` (badge, points) and `events` (event, points). --dry-run changes nothing: it prints, per \
                    metric and in total, what the rules would have \
                    paid for the activity of the last --days UTC days beside what the rules in force paid. \
                    A change of the rules waits for a second person's approval (policies/approvals.yaml): it prints \
                    the approval request, and `approvals approve ID` by another manager puts the rules in force.
                    Example: backoffice fitpoints rules set policies/fitpoints/earning-rules.yaml --dry-run --days 30
                    """)
            @OptionGroup(title: "Global Options") var global: GlobalOptions
            @Argument(help: "A YAML or JSON rules file.") var file: String
            @Flag(help: "Show what the rules would have paid; set nothing.") var dryRun = false
            @Option(help: "With --dry-run: how many UTC days back, today included (1–90, default 30).") var days: Int?
            @Option(help: "Why the rules change (kept with the approval request a change of them waits in).")
            var reason: String?

            func rules() throws -> Components.Schemas.EarningRulesDraft {
                try readStructuredFile(Components.Schemas.EarningRulesDraft.self, at: file)
            }

            func run() async throws {
                if dryRun {
                    try await global.show(.rows(key: "lines", simulationColumns)) {
                        try await $0.simulateEarningRules(body: .json(.init(rules: try rules(), days: days)))
                    }
                } else {
                    guard days == nil else { throw ValidationError("--days goes with --dry-run") }
                    try await global.show(.rows(key: "metrics", ruleColumns)) {
                        var body = try rules()
                        body.reason = reason ?? body.reason
                        return try await $0.setEarningRules(
                            headers: .init(idempotencyKey: global.changeKey()), body: .json(body))
                    }
                }
            }
        }
    }
}
