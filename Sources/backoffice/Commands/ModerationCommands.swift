import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

let moderationCaseColumns = [
    "id", "severity", "content_kind", "content_id", "content_text", "author_id", "opened_by", "matched_rules",
    "report_count", "status", "assigned_to_email", "assigned_until", "opened_at", "version", "author",
]
let statementColumns = [
    "decision_id", "decision", "removes_content", "account_locked", "facts", "grounds", "explanation",
    "automated_detection", "automated_decision", "decided_at", "redress",
]

struct Moderation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moderation",
        abstract: "Forum moderation: the screen, reports, the moderators' queue, decisions and statements of reasons.",
        discussion: """
            The app screens each post (`screen`) and passes on reports (`report`); held and reported content waits \
            in the queue, most severe first. A moderator takes a case (held 30 minutes) and decides it with a \
            ground of policies/moderation/policy.yaml; a lock goes through the accounts' own lock. Every decision \
            has a statement of reasons (`statements`), exportable for transparency reports (`export`).

            Example: backoffice moderation queue
            """,
        subcommands: [
            Screen.self, Report.self, Queue.self, Show.self, Take.self, Decide.self, Statements.self, Removals.self,
            Export.self, Offenders.self,
        ])

    struct Screen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "screen", abstract: "Screen a text as the app does before showing it (app_service).",
            discussion: "Example: backoffice moderation screen --author 5b1c… --content-id post-1 --text \"Great run\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "The author's customer id.") var author: String
        @Option(help: "The app's id of the post or comment.") var contentId: String
        @Option(help: "post, comment or story.") var kind: Components.Schemas.ContentKind = .post
        @Option(help: "The text (at most 10,000 characters).") var text: String

        func run() async throws {
            try await global.show(.single(["action", "rule_ids", "masked_text", "case_id", "policy_digest"])) {
                try await $0.screenContent(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(contentKind: kind, contentId: contentId, text: text, authorId: author)))
            }
        }
    }

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report", abstract: "Pass on a customer's report of a post or comment (app_service).",
            discussion: """
                Reasons: harassment, hate, misinformation, other, self_harm, sexual, spam \
                (policies/moderation/policy.yaml).

                Example: backoffice moderation report --author 5b1c… --reporter 9a2e… --content-id c-7 \
                --kind comment --text "you are slow" --reason harassment
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "The author's customer id.") var author: String
        @Option(help: "The reporting customer's id.") var reporter: String
        @Option(help: "The app's id of the content.") var contentId: String
        @Option(help: "post, comment or story.") var kind: Components.Schemas.ContentKind = .post
        @Option(help: "The text as the reporter saw it.") var text: String
        @Option(help: "A report reason of the policy.") var reason: String

        func run() async throws {
            try await global.show(.single(["case_id", "report_count", "severity", "counted", "status"])) {
                try await $0.reportContent(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            contentKind: kind, contentId: contentId, text: text, authorId: author,
                            reporterId: reporter, reason: reason)))
            }
        }
    }

    struct Queue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "queue", abstract: "Open cases, most severe first, then oldest.",
            discussion: "Example: backoffice moderation queue --limit 20")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(moderationCaseColumns)) {
                try await $0.moderationQueue(query: .init(limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "A case with its reports and statements of reasons.",
            discussion: "Example: backoffice moderation show 3f9a…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Case id.") var id: String

        func run() async throws {
            try await global.show(.single(["case", "reports", "statements"])) {
                try await $0.getModerationCase(path: .init(caseId: id))
            }
        }
    }

    struct Take: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "take", abstract: "Hold a case for 30 minutes (others can read it, not decide it).",
            discussion: "Example: backoffice moderation take 3f9a…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Case id.") var id: String

        func run() async throws {
            try await global.show(.single(moderationCaseColumns)) {
                try await $0.takeModerationCase(
                    path: .init(caseId: id), headers: .init(idempotencyKey: global.changeKey()))
            }
        }
    }

    struct Decide: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decide", abstract: "Decide a case; prints its statement of reasons.",
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
            try await global.show(.single(statementColumns)) {
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

    struct Statements: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "statements", abstract: "The statements of reasons of a case's decisions, oldest first.",
            discussion: "Example: backoffice moderation statements 3f9a…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Case id.") var id: String

        func run() async throws {
            try await global.show(.page(statementColumns)) {
                try await $0.listStatementsOfReasons(path: .init(caseId: id))
            }
        }
    }

    struct Removals: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "removals", abstract: "What the app must take down, after a seq (app_service).",
            discussion: "Example: backoffice moderation removals --since 0")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "The seq of the last removal applied.") var since: Int64?
        @Option(help: "At most this many.") var limit: Int?

        func run() async throws {
            try await global.show(.page(["seq", "decision", "content_kind", "content_id", "case_id", "decided_at"])) {
                try await $0.listModerationRemovals(query: .init(since: since, limit: limit))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "Statements of reasons as JSON lines, streamed (transparency reports).",
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
                switch output {
                case .ok(let ok):
                    try await Transfer.download(try ok.body.applicationJsonl, to: file, counting: "statements")
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }

    struct Offenders: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "offenders",
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
