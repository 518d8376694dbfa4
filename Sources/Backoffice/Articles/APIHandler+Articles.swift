import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension Article {
    var api: Components.Schemas.Article {
        get throws {
            Components.Schemas.Article(
                id: id.text, slug: slug, state: try .init(known: state.rawValue), version: version,
                liveVersion: liveVersion, authorId: authorID.text, title: content.title, summary: content.summary,
                category: try .init(known: content.category), body: content.body, coverUrl: content.coverURL,
                byline: content.byline, tags: content.tags, words: words, readingMinutes: readingMinutes,
                reviewComment: reviewComment, reviewedBy: reviewedBy?.text, reviewedAt: reviewedAt,
                submittedAt: submittedAt, publishedAt: publishedAt, createdAt: createdAt, updatedAt: updatedAt,
                updatedBy: updatedBy.text)
        }
    }
}

extension ArticleVersion {
    var api: Components.Schemas.ArticleVersion {
        get throws {
            Components.Schemas.ArticleVersion(
                version: version, title: content.title, summary: content.summary,
                category: try .init(known: content.category), body: content.body, coverUrl: content.coverURL,
                byline: content.byline, tags: content.tags, writtenBy: writtenBy.text, writtenAt: writtenAt)
        }
    }
}

extension PublishedArticle {
    var summaryAPI: Components.Schemas.PublishedArticleSummary {
        get throws {
            Components.Schemas.PublishedArticleSummary(
                slug: slug, title: content.title, summary: content.summary,
                category: try .init(known: content.category), tags: content.tags, coverUrl: content.coverURL,
                byline: content.byline, readingMinutes: readingMinutes, publishedAt: publishedAt, updatedAt: liveAt)
        }
    }

    var api: Components.Schemas.PublishedArticle {
        get throws {
            Components.Schemas.PublishedArticle(
                slug: slug, title: content.title, summary: content.summary,
                category: try .init(known: content.category), tags: content.tags, coverUrl: content.coverURL,
                byline: content.byline, readingMinutes: readingMinutes, publishedAt: publishedAt, updatedAt: liveAt,
                html: html ?? "", markdown: content.body)
        }
    }

    /// What identifies what the app was sent: the article and its live version.
    var identity: String { "\(id.text):\(version)" }
}

extension APIHandler {
    func createArticle(_ input: Operations.CreateArticle.Input) async throws -> Operations.CreateArticle.Output {
        let body: Components.Schemas.ArticleDraft = try json(input.body)
        let content = ArticleContent(
            title: body.title, summary: body.summary, category: body.category.rawValue, body: body.body,
            coverURL: body.coverUrl, byline: body.byline, tags: body.tags ?? [])
        return .created(try await written(CreateArticle(slug: body.slug, content: content), body: body, status: 201))
    }

    func updateArticle(_ input: Operations.UpdateArticle.Input) async throws -> Operations.UpdateArticle.Output {
        let body: Components.Schemas.ArticleUpdate = try json(input.body)
        let id = try parseID(input.path.articleId, "article_id")
        let changes = ArticleChanges(
            title: body.title, summary: body.summary, category: body.category?.rawValue, body: body.body,
            coverURL: body.coverUrl, byline: body.byline, tags: body.tags)
        return .ok(
            try await written(
                UpdateArticle(id: id, changes: changes, ifMatch: input.headers.ifMatch), on: id, body: body))
    }

    func listArticleVersions(_ input: Operations.ListArticleVersions.Input) async throws
        -> Operations.ListArticleVersions.Output
    {
        let versions = try await read(ArticleVersions(id: try parseID(input.path.articleId, "article_id")))
        return .ok(.init(body: .json(.init(items: try versions.map { try $0.api }))))
    }

    /// The app's list (the reference for its hand-encoded path, `HotList.publishedArticles`). The ETag
    /// is a digest of the articles answered, their live versions and the next cursor, so an unchanged
    /// page is 304 without encoding a body.
    func listPublishedArticles(_ input: Operations.ListPublishedArticles.Input) async throws
        -> Operations.ListPublishedArticles.Output
    {
        let (items, next, etag) = try await PublishedListRequest(
            category: input.query.category?.rawValue, tag: input.query.tag, limit: input.query.limit,
            cursor: input.query.cursor
        ).run(database, context: try context())
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(
            .init(
                headers: .init(eTag: etag),
                body: .json(.init(items: try items.map { try $0.summaryAPI }, nextCursor: next))))
    }

    func getPublishedArticle(_ input: Operations.GetPublishedArticle.Input) async throws
        -> Operations.GetPublishedArticle.Output
    {
        let article = try await read(GetPublishedArticle(slug: input.path.articleSlug))
        let etag = EntityTag.digest("a", [article.identity])
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(.init(headers: .init(eTag: etag), body: .json(try article.api)))
    }
}
