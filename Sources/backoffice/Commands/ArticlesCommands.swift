import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Articles {
    /// The fields an article is written with.
    struct Fields: ParsableArguments {
        @Option(help: "The title.") var title: String?
        @Option(help: "One or two sentences for the list.") var summary: String?
        @Option(help: "nutrition, exercise, recovery, mindset, sleep or wellbeing.")
        var category: Components.Schemas.ArticleCategory?
        @Option(help: "A Markdown file with the body.") var bodyFile: String?
        @Option(help: "An https URL of the cover image (empty removes it).") var coverURL: String?
        @Option(help: "The author as readers see it (\"Maya Lin, dietitian\").") var byline: String?
        @Option(help: "A tag (lower-case letters, digits, dashes); repeat for more.") var tag: [String] = []

        func body() throws -> String? { try bodyFile.map(readTextFile) }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Fields") var fields: Fields
        @Option(help: "The slug (made from the title when absent).") var slug: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.article)) { client in
                guard let title = fields.title, let summary = fields.summary, let category = fields.category,
                    let body = try fields.body()
                else { throw CLIFailure.usage("error: --title, --summary, --category and --body-file are required") }
                return try await client.createArticle(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            slug: slug, title: title, summary: summary, category: category, body: body,
                            coverUrl: fields.coverURL, byline: fields.byline, tags: fields.tag)))
            }
        }
    }

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

    struct Update: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Article id.") var id: String
        @OptionGroup(title: "Fields") var fields: Fields
        @Option(help: "Only if the article is still at this version.") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.article)) { client in
                let body = try fields.body()
                let version = try await currentVersion(ifMatch, await client.getArticle(path: .init(articleId: id)))
                return try await client.updateArticle(
                    path: .init(articleId: id), headers: .init(idempotencyKey: global.changeKey(), ifMatch: version),
                    body: .json(
                        .init(
                            title: fields.title, summary: fields.summary, category: fields.category, body: body,
                            coverUrl: fields.coverURL, byline: fields.byline,
                            tags: fields.tag.isEmpty ? nil : fields.tag)))
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
