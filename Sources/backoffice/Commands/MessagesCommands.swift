import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation

let messageColumns = [
    "id", "state", "severity", "audience", "title", "publish_at", "expires_at", "window_starts_at", "window_ends_at",
    "version",
]

struct Messages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages",
        abstract: "System messages customers see in the app: draft, publish, retract (backend managers).",
        discussion: "Example: backoffice messages create --file notice.md && backoffice messages publish 7a1c…",
        subcommands: [Create.self, List.self, Show.self, Publish.self, Retract.self, Active.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract:
                "Draft a message from flags, or from a Markdown file whose front matter holds the fields (flags win).",
            discussion: """
                Example: backoffice messages create --title "Planned maintenance" --severity maintenance \\
                  --window-starts-at 2026-12-01T02:00:00Z --window-ends-at 2026-12-01T03:00:00Z \
                --body "Sign-in pauses for an hour."

                A file:
                  ---
                  title: Planned maintenance
                  severity: maintenance        # info, warning, maintenance, critical
                  audience: all                # all, subscribers, non_subscribers
                  window_starts_at: 2026-12-01T02:00:00Z
                  window_ends_at: 2026-12-01T03:00:00Z
                  ---
                  Sign-in pauses for **one hour**.
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A Markdown file with front matter.") var file: String?
        @Option(help: "Title (at most 200 characters).") var title: String?
        @Option(help: "Body, Markdown.") var body: String?
        @Option(help: "info, warning, maintenance or critical.") var severity: Components.Schemas.MessageSeverity?
        @Option(help: "all (default), subscribers or non_subscribers.") var audience:
            Components.Schemas.MessageAudience?
        @Option(help: "RFC 3339 time it starts showing once published (default: when published).") var publishAt:
            String?
        @Option(help: "RFC 3339 time it stops showing.") var expiresAt: String?
        @Option(help: "Maintenance window start (RFC 3339).") var windowStartsAt: String?
        @Option(help: "Maintenance window end (RFC 3339).") var windowEndsAt: String?

        func run() async throws {
            try await global.show(.single(messageColumns)) { client in
                let draft = try MarkdownFile(path: file)
                guard let title = title ?? draft.text("title") else {
                    throw CLIFailure.usage("a title is required (--title or the file's front matter)")
                }
                guard let body = body ?? draft.body else {
                    throw CLIFailure.usage("a body is required (--body or the file's text)")
                }
                guard
                    let severity = try severity
                        ?? draft.text("severity").map({
                            try MarkdownFile.value(Components.Schemas.MessageSeverity.self, $0, "severity")
                        })
                else { throw CLIFailure.usage("a severity is required (--severity or the file's front matter)") }
                let audience =
                    try audience
                    ?? draft.text("audience").map {
                        try MarkdownFile.value(Components.Schemas.MessageAudience.self, $0, "audience")
                    }
                return try await client.createMessage(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            title: title, body: body, severity: severity, audience: audience,
                            publishAt: try parseTime(publishAt ?? draft.text("publish_at"), "publish_at"),
                            expiresAt: try parseTime(expiresAt ?? draft.text("expires_at"), "expires_at"),
                            windowStartsAt: try parseTime(
                                windowStartsAt ?? draft.text("window_starts_at"), "window_starts_at"),
                            windowEndsAt: try parseTime(windowEndsAt ?? draft.text("window_ends_at"), "window_ends_at"))
                    ))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List messages, newest first, with their state now.",
            discussion: "Example: backoffice messages list")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(messageColumns)) {
                try await $0.listMessages(query: .init(limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one message with its body.", discussion: "Example: backoffice messages show 7a1c…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Message id.") var id: String

        func run() async throws {
            try await global.show(.single(messageColumns + ["body", "retract_reason"])) {
                try await $0.getMessage(path: .init(messageId: id))
            }
        }
    }

    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Publish a draft: it shows from its publish_at (or now) until its expires_at.",
            discussion: "Example: backoffice messages publish 7a1c…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Message id.") var id: String
        @Option(help: "Only if the message is still at this ETag/version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(messageColumns)) { client in
                try await client.publishMessage(
                    path: .init(messageId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: ifMatch))
            }
        }
    }

    struct Retract: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retract",
            abstract: "Withdraw a scheduled or showing message for good (reason required).",
            discussion: "Example: backoffice messages retract 7a1c… --reason \"Maintenance postponed\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Message id.") var id: String
        @Option(help: "Why (recorded in the audit log).") var reason: String
        @Option(help: "Only if the message is still at this ETag/version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(messageColumns)) { client in
                try await client.retractMessage(
                    path: .init(messageId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: ifMatch),
                    body: .json(.init(reason: reason)))
            }
        }
    }

    struct Active: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "active",
            abstract: "What the app shows now (app_service token).",
            discussion: "Example: backoffice messages active --audience subscribers")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "all (default), subscribers or non_subscribers.") var audience:
            Components.Schemas.MessageAudience?

        func run() async throws {
            try await global.show(.page(["id", "severity", "audience", "title", "publish_at", "expires_at"])) {
                client in
                try await client.activeMessages(query: .init(audience: audience))
            }
        }
    }
}


/// A Markdown file given on the command line, with its fields in its front matter (messages, content policies).
struct MarkdownFile {
    private let document: FrontMatterDocument?

    init(path: String?) throws {
        guard let path else {
            document = nil
            return
        }
        let text = try readTextFile(path)
        do { document = try FrontMatterDocument(text: text) } catch let error as MalformedDocument {
            throw CLIFailure(message: "error: \(path): \(error)", exitCode: 6)
        }
    }

    var body: String? { document?.body }

    func text(_ name: String) -> String? { document?.text(name) }

    /// A field as a list: a YAML list, or words separated by commas.
    func list(_ name: String) -> [String]? {
        switch document?.fields[name] {
        case let items as [Any]: items.map { "\($0)" }
        case let text as String: text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        default: nil
        }
    }

    static func value<T: RawRepresentable<String>>(_ type: T.Type, _ text: String, _ field: String) throws -> T {
        guard let value = T(rawValue: text) else {
            throw CLIFailure(message: "error: \(field): unknown value '\(text)'", exitCode: 6)
        }
        return value
    }
}
