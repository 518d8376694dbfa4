import BackofficeAPI
import BackofficePlatform
import Foundation
import NIOCore

/// One request for a page of the app's published articles, however it arrived (the generated
/// handler or the hand-encoded path): validated once, read once (its readers share a page for up
/// to `PublishedArticles.maxAge`), and tagged by what it answers: the articles, their live
/// versions and the next cursor, so an unchanged page is 304 without writing a body.
struct PublishedListRequest: Sendable {
    var category: String?
    var tag: String?
    var limit: Int?
    var cursor: String?

    /// Reads the query string of `GET /v1/articles/published`.
    init(query: String?) throws {
        var (category, tag): (String?, String?) = (nil, nil)
        let list = try ListQuery(query) { name, value in
            switch name {
            case "category":
                guard Components.Schemas.ArticleCategory(rawValue: value) != nil else {
                    throw Problem.malformed(
                        "category: must be one of \(ArticleContent.categories.joined(separator: ", "))")
                }
                category = value
            case "tag": tag = value
            default: break
            }
        }
        self.init(category: category, tag: tag, limit: list.limit, cursor: list.cursor)
    }

    init(category: String?, tag: String?, limit: Int?, cursor: String?) {
        (self.category, self.tag, self.limit, self.cursor) = (category, tag, limit, cursor)
    }

    /// A page of at most `limit` (50 at most) articles, the next page's cursor and the page's tag.
    func run(_ database: Database, context: OperationContext) async throws -> (
        items: ArraySlice<PublishedArticle>, nextCursor: String?, etag: String
    ) {
        let limit = try pageLimit(limit, max: 50)
        let after = try Cursor.timeAndID(cursor).map { (time: $0.createdAt, id: $0.id) }
        let articles = try await database.read(
            PublishedArticles(
                category: category, tag: tag?.trimmingCharacters(in: .whitespaces).lowercased(), after: after,
                limit: limit + 1),
            context: context, maxAge: PublishedArticles.maxAge)
        let (items, next) = keysetPage(articles, limit: limit) { Cursor.timeAndID($0.publishedAt, $0.id) }
        return (items, next, EntityTag.digest("p", items.map(\.identity) + [next ?? ""]))
    }
}

/// Writes a page of published articles as JSON by hand: the bytes the generated encoder writes
/// (keys sorted, absent values omitted), a test holding the two equal.
enum PublishedListJSON {
    /// The page; each article's category must be one the contract knows (`UnknownValue` otherwise,
    /// as the generated encoding refuses it), checked before anything is written.
    static func page(_ items: ArraySlice<PublishedArticle>, nextCursor: String?) throws -> @Sendable () -> ByteBuffer {
        for article in items { _ = try Components.Schemas.ArticleCategory(known: article.content.category) }
        return { JSONBytes.page(items, nextCursor: nextCursor, bytesPerItem: 400, write) }
    }

    private static func write(_ article: PublishedArticle, into out: inout JSONBytes) {
        let content = article.content
        out.raw("{")
        if let byline = content.byline {
            out.raw("\"byline\":")
            out.string(byline)
            out.raw(",")
        }
        out.raw("\"category\":")
        out.string(content.category)
        out.optional(",\"cover_url\":", content.coverURL)
        out.raw(",\"published_at\":")
        out.date(article.publishedAt)
        out.raw(",\"reading_minutes\":")
        out.integer(Int64(article.readingMinutes))
        out.raw(",\"slug\":")
        out.string(article.slug)
        out.raw(",\"summary\":")
        out.string(content.summary)
        out.raw(",\"tags\":")
        out.strings(content.tags)
        out.raw(",\"title\":")
        out.string(content.title)
        out.raw(",\"updated_at\":")
        out.date(article.liveAt)
        out.raw("}")
    }
}

extension HotList {
    /// `GET /v1/articles/published`, written by `PublishedListJSON`, 304 when the app holds the page.
    /// Planned as PostgreSQL chooses: its filters (a category, a tag) change the best plan.
    static let publishedArticles = HotList(route: "/v1/articles/published", plans: .auto) {
        _, query, database, context in
        let (items, next, etag) = try await PublishedListRequest(query: query).run(database, context: context)
        return HotPage(etag: etag, write: try PublishedListJSON.page(items, nextCursor: next))
    }
}
