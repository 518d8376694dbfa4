import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

/// Articles in every state (`articles.list`), as `ListReviewed` lists reviewed content.
package typealias ListArticles = ListReviewed<Article>

/// One article, its newest version (`articles.read`); another writer's is 404 to an expert.
package typealias GetArticle = GetReviewed<Article>

/// Every version of an article, newest first (`articles.read`).
package struct ArticleVersions: Query {
    package static let action: Action = "articles.read"
    let id: UUID
    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> [ArticleVersion] {
        let article = try await Article.fetch(id, in: unit)
        return try await unit.all(
            """
            SELECT \(unescaped: ArticleVersion.columns) FROM article_versions WHERE article_id = \(article.id)
            ORDER BY version DESC
            """)
    }
}

/// The sanitised HTML of one version of an article, as rendered when it was saved
/// (`articles.read`; another writer's is 404 to an expert), in one statement.
package struct ArticleHTML: Query {
    package static let action: Action = "articles.read"
    let id: UUID
    let version: Int
    package init(id: UUID, version: Int) { (self.id, self.version) = (id, version) }

    package func read(in unit: UnitOfWork) async throws -> String {
        let html = try await unit.first(
            """
            SELECT v.html FROM article_versions v JOIN articles a ON a.id = v.article_id
            WHERE v.article_id = \(id) AND v.version = \(version)
              AND (NOT \(unit.context.authoredOnly) OR a.author_id = \(unit.principal.operatorID))
            """
        ) { try $0.decode(String.self) }
        guard let html else { throw DomainError.notFound("Article \(id.text)") }
        return html
    }
}

/// An article as the app shows it: its live version.
package struct PublishedArticle: Sendable, Equatable {
    package var id: UUID
    package var slug: String
    package var version: Int
    package var content: ArticleContent
    package var readingMinutes: Int
    package var publishedAt: Date
    package var liveAt: Date
    /// The sanitised HTML (read for one article, not for lists).
    package var html: String?
}

extension PublishedArticle: RowDecodable {
    package static let columns = """
        a.id, a.slug, a.live_version, v.title, v.summary, v.category, v.cover_url, v.byline, v.tags, \
        v.reading_minutes, a.first_published_at, a.live_at
        """
    /// Live articles with their live version (alias `a`, the version `v`).
    package static let source = """
        articles a JOIN article_versions v ON v.article_id = a.id AND v.version = a.live_version \
        WHERE a.live_version IS NOT NULL AND a.state <> 'archived'
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (UUID, String, Int, String, String, String, String?, String?, [String], Int, Date, Date).self)
        self.init(
            id: c.0, slug: c.1, version: c.2,
            content: ArticleContent(
                title: c.3, summary: c.4, category: c.5, body: "", coverURL: c.6, byline: c.7, tags: c.8),
            readingMinutes: c.9, publishedAt: c.10, liveAt: c.11, html: nil)
    }
}

/// The app's list (`articles.published`): live articles, newest first publication first, by
/// category and tag. One statement, served by the `articles_live` index. Every reader asks for the
/// same few pages, so readers share a page for up to `maxAge` (`ReadCache`; a change made through
/// this process shows at once, one made by another process within that age).
package struct PublishedArticles: CacheableQuery {
    package static let maxAge: Duration = .seconds(1)
    package static let action: Action = "articles.published"
    let category: String?
    let tag: String?
    let after: (time: Date, id: UUID)?
    let limit: Int

    package init(category: String?, tag: String?, after: (time: Date, id: UUID)?, limit: Int) {
        (self.category, self.tag, self.after, self.limit) = (category, tag, after, limit)
    }

    /// Every parameter, each quoted and escaped (an array's description), so no two reads share a key.
    package var cacheKey: String {
        [
            category ?? "", tag ?? "", after.map { Cursor.timeAndID($0.time, $0.id).joined(separator: ",") } ?? "",
            String(limit),
        ].description
    }

    package func read(in unit: UnitOfWork) async throws -> [PublishedArticle] {
        try await unit.all(
            """
            SELECT \(unescaped: PublishedArticle.columns) FROM \(unescaped: PublishedArticle.source)
              AND (\(category)::text IS NULL OR v.category = \(category))
              AND (\(tag)::text IS NULL OR \(tag) = ANY (v.tags))
              AND (\(after?.time)::timestamptz IS NULL OR (a.first_published_at, a.id) < (\(after?.time), \(after?.id)))
            ORDER BY a.first_published_at DESC, a.id DESC
            LIMIT \(limit)
            """)
    }
}

/// One live article by its slug, with its HTML and Markdown (`articles.published`).
package struct GetPublishedArticle: Query {
    package static let action: Action = "articles.published"
    let slug: String
    package init(slug: String) { self.slug = slug }

    package func read(in unit: UnitOfWork) async throws -> PublishedArticle {
        let found = try await unit.first(
            """
            SELECT \(unescaped: PublishedArticle.columns), v.html, v.body FROM \(unescaped: PublishedArticle.source)
              AND a.slug = \(slug)
            """
        ) { row -> PublishedArticle in
            var article = try PublishedArticle(row: row)
            let columns = row.makeRandomAccess()
            article.html = try columns[12].decode(String.self)
            article.content.body = try columns[13].decode(String.self)
            return article
        }
        guard let found else { throw DomainError.notFound("Published article '\(slug)'") }
        return found
    }
}
