import BackofficeConsole
import BackofficePlatform
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
                        id: article.id, changes: ArticleForm(console.form).changes,
                        ifMatch: console.form["version"]))
                return console.redirect("/console/articles/\(article.id.text)", flash: "Saved as a new version.")
            } refused: { issues in
                try await console.articleEditor(issues: issues, article: article)
            }
        }
        for move in [ReviewMove.submit, .approve, .sendBack, .archive] {
            post("articles/{id}/\(move.path)", on: group) { console in try await console.moveArticle(move) }
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
                ConsoleOption.choice(
                    value: $0.value, label: $0.label.replacingOccurrences(of: "_", with: " "), selected: $0.selected)
            },
            "canCreate": may(CreateArticle.action),
        ]
        if state == nil, form.text("cursor") == nil, may(Article.action(.approve)) {
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
            ReviewedWriters<Article>(
                ids: Set(versions.map(\.writtenBy) + [article.authorID] + [article.reviewedBy].compactMap { $0 })))
        let compare = VersionComparison(
            versions.map { ($0.version, ArticleText.text($0.content)) }, live: article.liveVersion,
            from: form.text("from"), to: form.text("to"))
        var data: [String: Any] = [
            "article": ArticleRow(article), "facts": ArticleFacts(article, writers: writers),
            "previewHTML": HTML(StoredHTML(html: try await read(ArticleHTML(id: id, version: article.version)))),
            "version": EntityTag.of(Int64(article.version)), "values": values, "base": "/console/articles/\(id.text)",
            "versions": versions.map { ArticleVersionRow($0, writers: writers, live: article.liveVersion) },
        ]
        data.merge(compare.values) { $1 }
        let wroteSinceLive = versions.contains {
            $0.version > (article.liveVersion ?? 0) && $0.writtenBy == principal.operatorID
        }
        data.merge(ReviewMoves(article, wroteSinceLive: wroteSinceLive, may: may).values) { $1 }
        FormRefusal(issues).add(to: &data)
        return page(
            "article", title: article.content.title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// Makes `move` with the form's version and comment; a refusal is shown on the article's page.
    fileprivate func moveArticle(_ move: ReviewMove) async throws -> ConsoleAnswer {
        let id = try routeID()
        return try await submit(reading: ArticleForm.issues) {
            if move == .archive { try form.confirm("archive") }
            _ = try await run(
                MoveArticle(id: id, move: move, comment: form.text("comment"), ifMatch: form["version"]))
            return redirect("/console/articles/\(id.text)", flash: move.done)
        } refused: { issues in
            try await articlePage(id, issues: ReviewMoves.commentIssues(issues, of: move), values: form.values)
        }
    }
}
