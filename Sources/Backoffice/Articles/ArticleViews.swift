import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

/// The editor's fields, read into an article's content or changes.
struct ArticleForm {
    let form: ConsoleForm

    init(_ form: ConsoleForm) { self.form = form }

    /// Tags typed separated by commas or spaces.
    private var tags: [String] {
        (form["tags"] ?? "").split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
    }

    var content: ArticleContent {
        ArticleContent(
            title: form["title"] ?? "", summary: form["summary"] ?? "", category: form["category"] ?? "",
            body: form["body"] ?? "", coverURL: form["cover_url"], byline: form["byline"], tags: tags)
    }

    /// Every field as sent (an empty cover URL or byline removes it).
    var changes: ArticleChanges {
        ArticleChanges(
            title: form["title"] ?? "", summary: form["summary"] ?? "", category: form["category"] ?? "",
            body: form["body"] ?? "", coverURL: form["cover_url"] ?? "", byline: form["byline"] ?? "", tags: tags)
    }

    /// The newest version as the editor's values.
    static func values(of article: Article) -> [String: String] {
        let content = article.content
        return [
            "title": content.title, "summary": content.summary, "category": content.category, "body": content.body,
            "cover_url": content.coverURL ?? "", "byline": content.byline ?? "",
            "tags": content.tags.joined(separator: ", "),
        ]
    }

    /// The refusal next to the editor's fields; a stale version says who saved the newer one and when.
    static func issues(_ refusal: DomainError) throws -> [FieldIssue] {
        var changed = "Someone saved a newer version after you opened this."
        if case .versionMismatch(_, let who?, let at) = refusal {
            changed = "\(who) saved a newer version" + (at.map { " at \(ConsoleTime.text($0))" } ?? "") + "."
        }
        return try FormRefusal.issues(
            refusal, fieldNames: ["cover_url": "cover_url"], conflictFields: ["slug_taken": "slug"],
            changed: changed + " Your text is kept below: copy what you need, then reload to see theirs.")
    }
}

extension SafeMarkdown {
    /// A preview's values (the editors' and the preview endpoint's): the sanitised HTML, its words
    /// and minutes to read.
    var previewValues: [String: Any] { ["previewHTML": HTML(self), "words": words, "minutes": readingMinutes] }
}

/// HTML the sanitiser wrote when a version was saved, as stored with it (an article version's, a
/// recommendation's): shown as it is, never rendered again on a read.
struct StoredHTML: SanitizedMarkup {
    let html: String
}

/// An article as the lists show it.
struct ArticleRow {
    let id: String, title: String, summary: String, category: String, state: String, stateLabel: String
    let version: Int, updated: ShownTime, submitted: ShownTime?, reviewComment: String?, words: Int, minutes: Int
    let isLive: Bool

    init(_ article: Article) {
        id = article.id.text
        title = article.content.title
        summary = article.content.summary
        category = article.content.category
        state = article.state.rawValue
        stateLabel = article.state.rawValue.replacingOccurrences(of: "_", with: " ")
        version = article.version
        updated = ConsoleTime.text(article.updatedAt)
        submitted = article.submittedAt.map(ConsoleTime.text)
        reviewComment = article.state == .draft ? article.reviewComment : nil
        words = article.words
        minutes = article.readingMinutes
        isLive = article.liveVersion != nil
    }
}

/// What an article's page says about it besides its text.
struct ArticleFacts {
    let slug: String, tags: String, coverURL: String?, byline: String?, author: String, live: String?
    let reviewedBy: String?, reviewedAt: ShownTime?

    init(_ article: Article, writers: [UUID: String]) {
        slug = article.slug
        tags = article.content.tags.joined(separator: ", ")
        coverURL = article.content.coverURL
        byline = article.content.byline
        author = writers[article.authorID] ?? "a former operator"
        live = article.liveVersion.map { v in
            "version \(v)" + (article.liveAt.map { " since \(ConsoleTime.text($0))" } ?? "")
        }
        reviewedBy = article.reviewedBy.map { writers[$0] ?? "a former operator" }
        reviewedAt = article.reviewedAt.map(ConsoleTime.text)
    }
}

/// One version in an article's list of versions.
struct ArticleVersionRow {
    let version: Int, versionTitle: String, writtenBy: String, writtenAt: ShownTime, isLive: Bool

    init(_ version: ArticleVersion, writers: [UUID: String], live: Int?) {
        self.version = version.version
        versionTitle = version.content.title
        writtenBy = writers[version.writtenBy] ?? "a former operator"
        writtenAt = ConsoleTime.text(version.writtenAt)
        isLive = version.version == live
    }
}

/// An article's version as lines of text, for the diff between two versions.
enum ArticleText {
    /// The content as one text: its fields as lines, then the body.
    static func text(_ content: ArticleContent) -> String {
        [
            "Title: \(content.title)", "Summary: \(content.summary)", "Category: \(content.category)",
            "Tags: \(content.tags.joined(separator: ", "))", "Cover: \(content.coverURL ?? "")",
            "Byline: \(content.byline ?? "")", "", content.body,
        ].joined(separator: "\n")
    }
}
