import BackofficePlatform
import Foundation
import PostgresNIO

/// An expert or a manager starts an article (`articles.create`): a draft, version 1, written by
/// the caller. A slug already used is 409 `slug_taken`.
package struct CreateArticle: AuditedOperation {
    package static let action: Action = "articles.create"
    let slug: String?
    let content: ArticleContent

    package init(slug: String?, content: ArticleContent) {
        self.slug = slug?.trimmingCharacters(in: .whitespaces).lowercased()
        self.content = content
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Article> {
        try content.validate()
        let slug = slug.flatMap { $0.isEmpty ? nil : $0 } ?? ArticleContent.slug(from: content.title)
        guard Validation.matches(slug, length: 2...100, ArticleContent.slugByte) else {
            throw DomainError.invalid(
                "slug", "invalid_slug", "must be 2–100 lower-case letters, digits or dashes, starting with either")
        }
        let id = unit.newID()
        let writer = unit.principal.operatorID
        let inserted = try await unit.first(
            """
            INSERT INTO articles (id, slug, author_id, state, version, created_at, updated_at, updated_by)
            VALUES (\(id), \(slug), \(writer), 'draft', 1, \(unit.now), \(unit.now), \(writer))
            ON CONFLICT (slug) DO NOTHING RETURNING id
            """
        ) { try $0.decode(UUID.self) }
        guard inserted != nil else {
            throw DomainError.conflict(code: "slug_taken", detail: "An article with the slug '\(slug)' exists.")
        }
        try await content.store(as: 1, of: id, in: unit)
        return try await Article.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A writer saves a new version (`articles.update`), as every reviewed kind does (`UpdateReviewed`):
/// `If-Match` required (428; 412 naming who saved since), a draft or a published article (its live
/// version stays in the app), never one in review or archived (409); an expert only its own (404).
package typealias UpdateArticle = UpdateReviewed<Article, ArticleChanges>

/// The fields an update sends; those absent keep their value (an empty cover URL or byline removes it).
package struct ArticleChanges: ContentChanges {
    package var title, summary, category, body, coverURL, byline: String?
    package var tags: [String]?

    package init(
        title: String? = nil, summary: String? = nil, category: String? = nil, body: String? = nil,
        coverURL: String? = nil, byline: String? = nil, tags: [String]? = nil
    ) {
        (self.title, self.summary, self.category, self.body) = (title, summary, category, body)
        (self.coverURL, self.byline, self.tags) = (coverURL, byline, tags)
    }

    package func applied(to content: ArticleContent) -> ArticleContent {
        ArticleContent(
            title: title ?? content.title, summary: summary ?? content.summary, category: category ?? content.category,
            body: body ?? content.body, coverURL: coverURL ?? content.coverURL, byline: byline ?? content.byline,
            tags: tags ?? content.tags)
    }
}

/// An article moves (`articles.submit`, `.approve`, `.send_back`, `.archive`), as reviewed content does.
package typealias MoveArticle = MoveReviewed<Article>

extension Article: WrittenReviewed {
    package var written: ArticleContent { content }
    package static let alias = "a"
    package static let noun = "article"
}

extension ArticleContent: WrittenContent {
    package func check(in unit: UnitOfWork) async throws { try validate() }

    /// Adds version `version` of article `id` with this content, rendered (by `MarkdownRendering`,
    /// within its time limit), written by the principal now.
    package func store(as version: Int, of id: UUID, in unit: UnitOfWork) async throws {
        let content = self
        let rendered = try await MarkdownRendering.render(content.body)
        try await unit.execute(
            """
            INSERT INTO article_versions (article_id, version, title, summary, category, body, html, cover_url,
                byline, tags, words, reading_minutes, written_by, written_at)
            VALUES (\(id), \(version), \(content.title), \(content.summary), \(content.category), \(content.body),
                \(rendered.html), \(content.coverURL), \(content.byline), \(content.tags), \(rendered.words),
                \(rendered.readingMinutes), \(unit.principal.operatorID), \(unit.now))
            """)
    }
}
