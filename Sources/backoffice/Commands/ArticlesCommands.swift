import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Articles {
    struct Import: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "A Markdown file with front matter.") var file: String

        func run() async throws {
            try await global.show(.single(CLIColumns.article)) { client in
                let document = try MarkdownFile(path: file)
                guard let title = document.text("title"), let summary = document.text("summary"),
                    let category = document.text("category"), let body = document.body
                else {
                    throw CLIFailure(
                        message: "error: \(file): front matter needs title, summary and category, and a text after it",
                        exitCode: 6)
                }
                return try await client.createArticle(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            slug: document.text("slug"), title: title, summary: summary,
                            category: try MarkdownFile.value(
                                Components.Schemas.ArticleCategory.self, category, "category"),
                            body: body, coverUrl: document.text("cover_url"), byline: document.text("byline"),
                            tags: document.list("tags"))))
            }
        }
    }

    struct Published: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Only this category.") var category: Components.Schemas.ArticleCategory?
        @Option(help: "Only with this tag.") var tag: String?
        @Option(help: "At most this many (1–50).") var limit: Int?
        @Option(help: "The next page's cursor.") var cursor: String?

        func run() async throws {
            try await global.show(.page(["slug", "title", "category", "reading_minutes", "published_at"])) {
                try await $0.listPublishedArticles(
                    query: .init(category: category, tag: tag, limit: limit, cursor: cursor))
            }
        }
    }
}
