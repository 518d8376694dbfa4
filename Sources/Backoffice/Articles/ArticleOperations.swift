import Foundation
import PostgresNIO
import BackofficePlatform

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
        try await ArticleContent.store(content, of: id, version: 1, in: unit)
        return try await Article.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A writer saves a new version (`articles.update`, `If-Match` required: 428 without, 412 when
/// stale, naming who saved the current version and when). A draft takes it; a published article
/// becomes a draft again while its live version stays in the app. In review or archived is 409.
/// An expert changes only what it wrote (another's is 404).
package struct UpdateArticle: AuditedOperation {
    package static let action: Action = "articles.update"
    let articleID: UUID
    let changes: ArticleChanges
    let ifMatch: String?

    package init(articleID: UUID, changes: ArticleChanges, ifMatch: String?) {
        (self.articleID, self.changes, self.ifMatch) = (articleID, changes, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Article> {
        let before = try await Article.fetch(articleID, forUpdate: true, in: unit)
        guard let ifMatch else { throw DomainError.preconditionRequired }
        try await before.check(ifMatch, in: unit)
        guard before.state == .draft || before.state == .published else {
            throw DomainError.invalidTransition(
                before.state == .inReview
                    ? "An article in review changes only after it is sent back."
                    : "An archived article changes no more.",
                current: before.state.rawValue)
        }
        let content = changes.applied(to: before.content)
        try content.validate()
        if content == before.content { return .unchanged(before) }
        let version = before.version + 1
        try await ArticleContent.store(content, of: before.id, version: version, in: unit)
        try await unit.execute(
            """
            UPDATE articles SET version = \(version), state = 'draft', updated_at = \(unit.now),
                updated_by = \(unit.principal.operatorID)
            WHERE id = \(before.id)
            """)
        return try await Article.audited(Self.action, before.id, before: before, in: unit)
    }
}

/// The fields an update sends; those absent keep their value (an empty cover URL or byline removes it).
package struct ArticleChanges: Sendable {
    package var title, summary, category, body, coverURL, byline: String?
    package var tags: [String]?

    package init(
        title: String? = nil, summary: String? = nil, category: String? = nil, body: String? = nil,
        coverURL: String? = nil, byline: String? = nil, tags: [String]? = nil
    ) {
        (self.title, self.summary, self.category, self.body) = (title, summary, category, body)
        (self.coverURL, self.byline, self.tags) = (coverURL, byline, tags)
    }

    func applied(to content: ArticleContent) -> ArticleContent {
        ArticleContent(
            title: title ?? content.title, summary: summary ?? content.summary, category: category ?? content.category,
            body: body ?? content.body, coverURL: coverURL ?? content.coverURL, byline: byline ?? content.byline,
            tags: tags ?? content.tags)
    }
}

/// How an article moves between states, and who may move it.
package enum ArticleMove: String, Sendable {
    /// A draft goes to review (its writer or a manager).
    case submit
    /// The version in review goes live (a manager who did not write it).
    case approve
    /// The version in review goes back to draft with the reviewer's comment.
    case sendBack = "send_back"
    /// The article leaves the app for good.
    case archive

    package var action: Action {
        switch self {
        case .submit: "articles.submit"
        case .approve: "articles.approve"
        case .sendBack: "articles.send_back"
        case .archive: "articles.archive"
        }
    }

    /// The states the move starts from.
    var from: Set<Article.State> {
        switch self {
        case .submit: [.draft]
        case .approve, .sendBack: [.inReview]
        case .archive: [.draft, .inReview, .published]
        }
    }

    /// Whether the move needs a comment (for the writer, or the record).
    var needsComment: Bool { self == .sendBack || self == .archive }
}

/// An article moves (`articles.submit`, `.approve`, `.send_back`, `.archive`; the permission is
/// the move's). From a state the move does not start from is 409; `If-Match`, when sent, must name
/// the newest version (412). Approval is refused to whoever wrote any version since the live one
/// (403 `own_version`), not only the newest: an edit by a manager followed by the writer's change of
/// a title is still that manager's text, so every word goes live only after a second person read it.
package struct MoveArticle: AuditedChange {
    package let articleID: UUID
    package let move: ArticleMove
    let comment: String?
    let ifMatch: String?

    package init(articleID: UUID, move: ArticleMove, comment: String? = nil, ifMatch: String? = nil) {
        (self.articleID, self.move, self.comment, self.ifMatch) = (articleID, move, comment, ifMatch)
    }

    package var permission: Action { move.action }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Article> {
        let comment = comment?.trimmingCharacters(in: .whitespacesAndNewlines)
        if move.needsComment {
            var validation = Validation()
            validation.text(comment, "comment", max: 2000)
            try validation.check()
        }
        let before = try await Article.fetch(articleID, forUpdate: true, in: unit)
        try await before.check(ifMatch, in: unit)
        guard move.from.contains(before.state) else {
            throw DomainError.invalidTransition(
                "Cannot \(move.rawValue.replacingOccurrences(of: "_", with: " ")) an article that is "
                    + "\(before.state.rawValue.replacingOccurrences(of: "_", with: " ")).",
                current: before.state.rawValue)
        }
        if move == .approve, let approver = unit.principal.operatorID,
            try await Self.wroteSinceLive(before, approver, in: unit)
        {
            throw DomainError.forbiddenTarget(
                move.action, code: "own_version",
                detail: "A version is approved by someone who wrote no version since the live one.")
        }
        try await unit.execute(update(before, comment: comment, in: unit))
        return try await Article.audited(move.action, before.id, before: before, reason: comment, in: unit)
    }

    /// Whether `writer` wrote a version of `article` newer than its live one (any version while none is live).
    static func wroteSinceLive(_ article: Article, _ writer: UUID, in unit: UnitOfWork) async throws -> Bool {
        try await unit.first(
            """
            SELECT EXISTS (SELECT 1 FROM article_versions WHERE article_id = \(article.id)
                AND version > \(article.liveVersion ?? 0) AND written_by = \(writer))
            """
        ) { try $0.decode(Bool.self) } ?? false
    }

    private func update(_ before: Article, comment: String?, in unit: UnitOfWork) -> PostgresQuery {
        let who = unit.principal.operatorID
        let now = unit.now
        switch move {
        case .submit:
            return """
                UPDATE articles SET state = 'in_review', submitted_at = \(now), updated_at = \(now), updated_by = \(who)
                WHERE id = \(before.id)
                """
        case .approve:
            return """
                UPDATE articles SET state = 'published', live_version = version, live_at = \(now),
                    first_published_at = coalesce(first_published_at, \(now)), review_comment = NULL,
                    reviewed_by = \(who), reviewed_at = \(now), updated_at = \(now), updated_by = \(who)
                WHERE id = \(before.id)
                """
        case .sendBack:
            return """
                UPDATE articles SET state = 'draft', review_comment = \(comment), reviewed_by = \(who),
                    reviewed_at = \(now), updated_at = \(now), updated_by = \(who)
                WHERE id = \(before.id)
                """
        case .archive:
            return """
                UPDATE articles SET state = 'archived', updated_at = \(now), updated_by = \(who) WHERE id = \(before.id)
                """
        }
    }
}

extension Article: PlatformOwned {
    static let auditTargetType = "article"

    /// Throws 412 unless `ifMatch` (when sent) names the newest version; the refusal says who
    /// made the article's last change and when.
    func check(_ ifMatch: String?, in unit: UnitOfWork) async throws {
        do { try EntityTag.check(ifMatch, version: Int64(version)) } catch DomainError.versionMismatch(
            let current, _, _)
        {
            let who = try await unit.first("SELECT email FROM operators WHERE id = \(updatedBy)") {
                try $0.decode(String.self)
            }
            throw DomainError.versionMismatch(current: current, changedBy: who, at: updatedAt)
        }
    }
}

extension ArticleContent {
    /// Adds version `version` of article `id` with this content, rendered (by `MarkdownRendering`,
    /// within its time limit), written by the principal now.
    static func store(_ content: ArticleContent, of id: UUID, version: Int, in unit: UnitOfWork) async throws {
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
