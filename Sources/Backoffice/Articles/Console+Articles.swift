import Foundation
import Hummingbird

extension Console {
    /// Articles. An expert's section is its own desk: its drafts (with a reviewer's comment when
    /// one was sent back), what waits in review, what is live. A manager's is the review queue
    /// (oldest submission first) and every article by state. The editor previews with the
    /// server's own renderer (`POST /console/articles/preview`, as the writer pauses; a Preview
    /// button without script); an article's page shows its newest version, the diff to the live
    /// one (or any two), and the moves the role may make.
    func registerArticles(on group: RouterGroup<AppRequestContext>) {
        section("articles", "Articles", needs: ListArticles.action, on: group) { console in
            console.context.authoredOnly ? try await console.writersDesk() : try await console.articleList()
        }
        get("articles/new", on: group) { console in
            guard console.may(CreateArticle.action) else { throw DomainError.forbidden(CreateArticle.action) }
            return try await console.articleEditor(values: ["category": ArticleContent.categories[0]], issues: [])
        }
        post("articles/new", on: group) { console in
            guard console.form["intent"] != "preview" else { return try await console.articleEditor(preview: true) }
            return try await console.submit(reading: ArticleForm.issues) {
                let article = try await console.run(
                    CreateArticle(slug: console.form.text("slug"), content: ArticleForm(console.form).content))
                return console.redirect(
                    "/console/articles/\(article.id.text)", flash: "Saved as a draft: submit it for review when ready.")
            } refused: { issues in
                try await console.articleEditor(issues: issues)
            }
        }
        post("articles/preview", on: group, holdsTransaction: false) { console in
            // Whoever writes Markdown for the app: articles' writers and recommendations' authors.
            let writes = [CreateArticle.action, UpdateArticle.action, CreateRecommendation.action]
            guard writes.contains(where: console.may) else { throw DomainError.forbidden(UpdateArticle.action) }
            return .page(
                console.pages.render("article-preview", try await MarkdownRendering.preview(console.form["body"] ?? ""))
            )
        }
        get("articles/{id}", on: group) { console in try await console.articlePage(try console.routeID(), issues: []) }
        get("articles/{id}/edit", on: group) { console in
            let article = try await console.read(GetArticle(id: try console.routeID()))
            return try await console.articleEditor(
                values: ArticleForm.values(of: article), issues: [], article: article)
        }
        post("articles/{id}/edit", on: group) { console in
            let article = try await console.read(GetArticle(id: try console.routeID()))
            guard console.form["intent"] != "preview" else {
                return try await console.articleEditor(preview: true, article: article)
            }
            return try await console.submit(reading: ArticleForm.issues) {
                _ = try await console.run(
                    UpdateArticle(
                        articleID: article.id, changes: ArticleForm(console.form).changes,
                        ifMatch: console.form["version"]))
                return console.redirect("/console/articles/\(article.id.text)", flash: "Saved as a new version.")
            } refused: { issues in
                try await console.articleEditor(issues: issues, article: article)
            }
        }
        for move in [ArticleMove.submit, .approve, .sendBack, .archive] {
            post("articles/{id}/\(move.path)", on: group) { console in try await console.moveArticle(move) }
        }
    }
}

extension ArticleMove {
    /// The move's path under an article's page (`send-back`).
    var path: String { rawValue.replacingOccurrences(of: "_", with: "-") }

    /// What the page says once the move is made.
    var done: String {
        switch self {
        case .submit: "Submitted for review: a manager reads it next."
        case .approve: "Approved: this version is live in the app."
        case .sendBack: "Sent back to its writer with your comment."
        case .archive: "Archived: the app no longer shows it."
        }
    }
}

extension ConsoleRequest {
    /// An expert's desk: its drafts, what waits in review and what is live (50 of each, newest
    /// change first).
    fileprivate func writersDesk() async throws -> ConsoleAnswer {
        func rows(_ state: Article.State) async throws -> [ArticleRow] {
            try await read(ListArticles(state: state, after: nil, limit: Console.pageSize)).map(ArticleRow.init)
        }
        let (drafts, review, live) = (try await rows(.draft), try await rows(.inReview), try await rows(.published))
        return page(
            "articles", title: "My articles",
            [
                "isDesk": true, "drafts": drafts, "hasDrafts": !drafts.isEmpty, "inReview": review,
                "hasInReview": !review.isEmpty, "live": live, "hasLive": !live.isEmpty,
                "canCreate": may(CreateArticle.action),
            ])
    }

    /// A manager's or an auditor's list: the review queue, then every article in the chosen state.
    fileprivate func articleList() async throws -> ConsoleAnswer {
        let state = try form.text("state").map { try Article.State(known: $0) }
        let (items, next) = try await ListArticles.page(
            state: state, after: form.text("cursor"), limit: Console.pageSize
        ) { try await read($0) }
        var data: [String: Any] = [
            "articles": items.map(ArticleRow.init), "hasArticles": !items.isEmpty,
            "states": ConsoleOption.all(
                Article.State.allCases.map(\.rawValue), selected: state?.rawValue, any: "Any state"
            ).map {
                ConsoleOption(
                    value: $0.value, label: $0.label.replacingOccurrences(of: "_", with: " "), selected: $0.selected)
            },
            "canCreate": may(CreateArticle.action),
        ]
        if state == nil, form.text("cursor") == nil, may(ArticleMove.approve.action) {
            let queue = try await read(ListArticles(state: .inReview, after: nil, limit: Console.pageSize))
            data["queue"] = queue.map(ArticleRow.init)
            data["showsQueue"] = true
            data["hasQueue"] = !queue.isEmpty
        }
        if let next {
            data["next"] = ConsoleLinks.path("/console/articles", ["state": state?.rawValue ?? "", "cursor": next])
        }
        return page("articles", title: "Articles", data)
    }

    /// The editor, for a new article or a new version of `article`: the form's values (as sent,
    /// when `values` is nil), the preview when asked for, each issue next to its field (422).
    fileprivate func articleEditor(
        values: [String: String]? = nil, issues: [FieldIssue] = [], preview: Bool = false, article: Article? = nil
    ) async throws -> ConsoleAnswer {
        let values = values ?? form.values
        var data: [String: Any] = [
            "values": values,
            "categories": ConsoleOption.all(ArticleContent.categories, selected: values["category"]),
            "action": article.map { "/console/articles/\($0.id.text)/edit" } ?? "/console/articles/new",
            "isNew": article == nil, "wordsPerMinute": SafeMarkdown.wordsPerMinute,
        ]
        if let article {
            data["article"] = ["id": article.id.text, "title": article.content.title, "state": article.state.rawValue]
            data["version"] = values["version"] ?? EntityTag.of(Int64(article.version))
            data["isLive"] = article.liveVersion != nil
        }
        data.merge(try await MarkdownRendering.preview(values["body"] ?? "")) { $1 }
        data["showsPreview"] = preview
        FormRefusal(issues).add(to: &data)
        let title = article.map { "Edit: \($0.content.title)" } ?? "New article"
        return page("article-form", title: title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// An article's page: its newest version rendered, the diff between two versions (by default
    /// the live one and the newest), the versions, and the moves its state and the role allow.
    fileprivate func articlePage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let article = try await read(GetArticle(id: id))
        let versions = try await read(ArticleVersions(id: id))
        let writers = try await read(
            ArticleWriters(
                ids: Set(versions.map(\.writtenBy) + [article.authorID] + [article.reviewedBy].compactMap { $0 })))
        let compare = ArticleComparison(
            versions, live: article.liveVersion, from: form.text("from"), to: form.text("to"))
        var data: [String: Any] = [
            "article": ArticleRow(article), "facts": ArticleFacts(article, writers: writers),
            "previewHTML": HTML(StoredHTML(html: try await read(ArticleHTML(id: id, version: article.version)))),
            "version": EntityTag.of(Int64(article.version)), "values": values,
            "versions": versions.map { ArticleVersionRow($0, writers: writers, live: article.liveVersion) },
        ]
        data.merge(compare.values) { $1 }
        let wroteSinceLive = versions.contains {
            $0.version > (article.liveVersion ?? 0) && $0.writtenBy == principal.operatorID
        }
        data.merge(ArticleMoves(article, wroteSinceLive: wroteSinceLive, may: may).values) { $1 }
        FormRefusal(issues).add(to: &data)
        return page(
            "article", title: article.content.title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// Makes `move` with the form's version and comment; a refusal is shown on the article's page.
    fileprivate func moveArticle(_ move: ArticleMove) async throws -> ConsoleAnswer {
        let id = try routeID()
        return try await submit(reading: ArticleForm.issues) {
            if move == .archive { try form.confirm("archive") }
            _ = try await run(
                MoveArticle(articleID: id, move: move, comment: form.text("comment"), ifMatch: form["version"]))
            return redirect("/console/articles/\(id.text)", flash: move.done)
        } refused: { issues in
            let issues = issues.map {
                $0.field == "comment"
                    ? FieldIssue(field: "comment_\(move.rawValue)", code: $0.code, message: $0.message) : $0
            }
            return try await articlePage(id, issues: issues, values: form.values)
        }
    }
}

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
    let version: Int, title: String, writtenBy: String, writtenAt: ShownTime, isLive: Bool

    init(_ version: ArticleVersion, writers: [UUID: String], live: Int?) {
        self.version = version.version
        title = version.content.title
        writtenBy = writers[version.writtenBy] ?? "a former operator"
        writtenAt = ConsoleTime.text(version.writtenAt)
        isLive = version.version == live
    }
}

/// Two versions side by side as a line diff of their whole content: by default the live version
/// (or, with none live, the one before the newest) and the newest.
struct ArticleComparison {
    let from: ArticleVersion
    let to: ArticleVersion
    let all: [ArticleVersion]

    init(_ versions: [ArticleVersion], live: Int?, from: String?, to: String?) {
        func version(_ text: String?) -> ArticleVersion? {
            text.flatMap(Int.init).flatMap { v in versions.first { $0.version == v } }
        }
        let newest = versions[0]
        self.to = version(to) ?? newest
        self.from =
            version(from) ?? live.flatMap { v in versions.first { $0.version == v } }.flatMap {
                $0 == newest ? nil : $0
            }
            ?? versions.dropFirst().first ?? newest
        all = versions
    }

    /// The content as one text: its fields as lines, then the body.
    static func text(_ content: ArticleContent) -> String {
        [
            "Title: \(content.title)", "Summary: \(content.summary)", "Category: \(content.category)",
            "Tags: \(content.tags.joined(separator: ", "))", "Cover: \(content.coverURL ?? "")",
            "Byline: \(content.byline ?? "")", "", content.body,
        ].joined(separator: "\n")
    }

    var values: [String: Any] {
        func options(_ chosen: ArticleVersion) -> [ConsoleOption] {
            all.map { ConsoleOption(value: String($0.version), label: "Version \($0.version)", selected: $0 == chosen) }
        }
        return [
            "fromOptions": options(from), "toOptions": options(to), "from": from.version, "to": to.version,
            "diff": TextDiff(from: Self.text(from.content), to: Self.text(to.content)).values,
            "hasVersions": all.count > 1,
        ]
    }
}

/// The moves an article's page offers: those its state allows and the role may make, approval
/// not to whoever wrote a version since the live one (the use case refuses it either way).
struct ArticleMoves {
    let values: [String: Any]

    init(_ article: Article, wroteSinceLive: Bool, may: (Action) -> Bool) {
        let draft = article.state == .draft
        let review = article.state == .inReview
        values = [
            "canEdit": (draft || article.state == .published) && may(UpdateArticle.action),
            "canSubmit": draft && may(ArticleMove.submit.action),
            "canApprove": review && may(ArticleMove.approve.action) && !wroteSinceLive,
            "ownVersion": review && may(ArticleMove.approve.action) && wroteSinceLive,
            "canSendBack": review && may(ArticleMove.sendBack.action),
            "canArchive": article.state != .archived && may(ArticleMove.archive.action),
        ]
    }
}
