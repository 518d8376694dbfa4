import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Messages {
    struct Create: AsyncParsableCommand {
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
            try await global.show(.single(CLIColumns.message)) { client in
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
