import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Articles")
struct ArticlesAPITests {
    static let draft = #"""
        {"title":"Protein at breakfast","summary":"Why eggs help","category":"nutrition",
         "body":"Eat **eggs**.\n\n<script>alert(1)</script>[x](javascript:alert(1))","tags":["protein"]}
        """#

    /// A second expert, with a token of its own.
    static func anotherExpert(_ env: TestEnvironment) async throws -> String {
        let context = OperationContext.system("test", policies: env.policies)
        let other = try await env.database.runAsSystem(
            CreateOperator(email: "other-expert@test.example", role: .expert, tenantID: nil), context: context)
        return try await env.database.runAsSystem(
            CreateToken(operatorID: other.id, name: "test", expiresInHours: nil), context: context
        ).1.value
    }

    @Test(
        """
        an expert writes and submits but never approves (403); a manager sends back with a comment (required); \
        a stale edit is 412 naming who and when; the writer of a version cannot approve it (403 own_version); \
        approved, the app reads it rendered inert
        """
    )
    func reviewFlow() async throws {
        try await TestEnvironment.with { env in
            let expert = env.fixture.tokens[.expert]!
            let manager = env.fixture.tokens[.backendManager]!
            let admin = env.fixture.tokens[.platformAdmin]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let created = try await client.call(.post, "/v1/articles", token: expert, json: Self.draft)
                #expect(created.status == 201, "\(created.text)")
                #expect(created["slug"] == "protein-at-breakfast" && created["state"] == "draft")
                let id = try #require(created["id"])
                let path = "/v1/articles/\(id)"
                #expect(try await client.call(.post, "\(path)/approve", token: expert).status == 403)
                #expect(try await client.call(.post, "\(path)/submit", token: expert)["state"] == "in_review")
                #expect(try await client.call(.post, "\(path)/approve", token: expert).status == 403)
                let noComment = try await client.call(
                    .post, "\(path)/send-back", token: manager, json: #"{"comment":" "}"#)
                #expect(noComment.status == 422)
                let sentBack = try await client.call(
                    .post, "\(path)/send-back", token: manager, json: #"{"comment":"Cite a source."}"#)
                #expect(sentBack["state"] == "draft" && sentBack["review_comment"] == "Cite a source.")

                let unversioned = try await client.call(.patch, path, token: expert, json: #"{"summary":"Eggs"}"#)
                #expect(unversioned.status == 428)
                let edited = try await client.call(
                    .patch, path, token: expert, json: #"{"summary":"Eggs, with a source"}"#,
                    headers: ["If-Match": "\"1\""])
                #expect(edited.status == 200 && edited["version"] == "2", "\(edited.text)")
                let byManager = try await client.call(
                    .patch, path, token: manager, json: #"{"title":"Protein at breakfast, sourced"}"#,
                    headers: ["If-Match": "\"2\""])
                #expect(byManager["version"] == "3")
                let stale = try await client.call(
                    .patch, path, token: expert, json: #"{"summary":"Late"}"#, headers: ["If-Match": "\"2\""])
                #expect(stale.status == 412)
                #expect(stale["detail"]?.contains("backend_manager@test.example") == true, "\(stale.text)")

                #expect(try await client.call(.post, "\(path)/submit", token: manager)["state"] == "in_review")
                let own = try await client.call(.post, "\(path)/approve", token: manager)
                #expect(own.status == 403 && own["code"] == "own_version", "\(own.text)")
                let approved = try await client.call(.post, "\(path)/approve", token: admin)
                #expect(approved["state"] == "published" && approved["live_version"] == "3", "\(approved.text)")

                let shown = try await client.call(.get, "/v1/articles/published/protein-at-breakfast", token: app)
                #expect(shown.status == 200)
                let html = try #require(shown["html"])
                // CommonMark reads the rest of the `<script>` line as part of its HTML block: the link's
                // Markdown stays text, and no element carries the script URL.
                #expect(
                    html.contains("<strong>eggs</strong>") && !html.contains("<script")
                        && !html.contains("=\"javascript"), "\(html)")
                #expect(InertHTML.problems(html).isEmpty)
                #expect(shown["markdown"]?.contains("<script>") == true, "the Markdown is returned as written")
            }
            let events = try await env.ownerScalar(
                "SELECT string_agg(action, ',' ORDER BY id) FROM audit_events WHERE target_type = 'article'",
                as: String.self)
            #expect(
                events == "articles.create,articles.submit,articles.send_back,articles.update,articles.update,"
                    + "articles.submit,articles.approve", "one event per change, and none for a refusal")
        }
    }

    @Test(
        """
        editing a published article makes a draft version that needs review while the live version stays; \
        another expert sees none of it (404)
        """
    )
    func editingPublishedAndOtherExperts() async throws {
        try await TestEnvironment.with { env in
            let expert = env.fixture.tokens[.expert]!
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let other = try await Self.anotherExpert(env)
            try await env.withApp { client in
                let id = try #require(
                    try await client.call(.post, "/v1/articles", token: expert, json: Self.draft)["id"])
                let path = "/v1/articles/\(id)"
                _ = try await client.call(.post, "\(path)/submit", token: expert)
                #expect(try await client.call(.post, "\(path)/approve", token: manager)["state"] == "published")

                let edited = try await client.call(
                    .patch, path, token: manager, json: #"{"title":"A new title"}"#, headers: ["If-Match": "1"])
                #expect(edited["state"] == "draft" && edited["version"] == "2" && edited["live_version"] == "1")
                let live = try await client.call(.get, "/v1/articles/published/protein-at-breakfast", token: app)
                #expect(live["title"] == "Protein at breakfast", "the live version stays until the new one is approved")

                #expect(try await client.call(.get, path, token: other).status == 404)
                #expect(
                    try await client.call(
                        .patch, path, token: other, json: #"{"title":"Mine"}"#, headers: ["If-Match": "2"]
                    ).status == 404)
                #expect(try await client.call(.post, "\(path)/submit", token: other).status == 404)
                let list = try await client.call(.get, "/v1/articles", token: other)
                #expect(try list.decode(Components.Schemas.ArticlePage.self).items.isEmpty)
                let mine = try await client.call(.get, "/v1/articles", token: expert)
                #expect(try mine.decode(Components.Schemas.ArticlePage.self).items.map(\.id) == [id])
            }
        }
    }

    @Test(
        """
        the approval sandwich: an expert writes v1, a manager inserts text (v2), the expert changes only the title \
        (v3) and submits: that manager's approval is 403 own_version (they wrote a version since the live one), \
        another's goes through; after it, the manager's own edit of the live article is again not theirs to approve
        """
    )
    func approvalSandwich() async throws {
        try await TestEnvironment.with { env in
            let expert = env.fixture.tokens[.expert]!
            let manager = env.fixture.tokens[.backendManager]!
            let admin = env.fixture.tokens[.platformAdmin]!
            try await env.withApp { client in
                let created = try await client.call(.post, "/v1/articles", token: expert, json: Self.draft)
                let path = "/v1/articles/\(try #require(created["id"]))"
                let inserted = try await client.call(
                    .patch, path, token: manager, json: #"{"body":"Eat **eggs**. The manager's words."}"#,
                    headers: ["If-Match": "\"1\""])
                #expect(inserted["version"] == "2", "\(inserted.text)")
                let retitled = try await client.call(
                    .patch, path, token: expert, json: #"{"title":"Protein at breakfast, retitled"}"#,
                    headers: ["If-Match": "\"2\""])
                #expect(retitled["version"] == "3", "\(retitled.text)")
                #expect(try await client.call(.post, "\(path)/submit", token: expert)["state"] == "in_review")
                let sandwich = try await client.call(.post, "\(path)/approve", token: manager)
                #expect(sandwich.status == 403 && sandwich["code"] == "own_version", "\(sandwich.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'articles.approve'", as: Int.self) == 0)
                let approved = try await client.call(.post, "\(path)/approve", token: admin)
                #expect(approved["state"] == "published" && approved["live_version"] == "3", "\(approved.text)")

                let edit = try await client.call(
                    .patch, path, token: manager, json: #"{"summary":"Edited live"}"#, headers: ["If-Match": "\"3\""])
                #expect(edit["version"] == "4", "\(edit.text)")
                #expect(try await client.call(.post, "\(path)/submit", token: manager)["state"] == "in_review")
                let own = try await client.call(.post, "\(path)/approve", token: manager)
                #expect(own.status == 403 && own["code"] == "own_version", "\(own.text)")
            }
        }
    }

    @Test("the app's list: newest first, cursor paged, by category and tag, ETag then 304 until something changes")
    func publishedList() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            var slugs: [String] = []
            for (index, category) in ["sleep", "nutrition", "sleep"].enumerated() {
                let content = ArticleContent(
                    title: "Article \(index)", summary: "S", category: category, body: "Text \(index)", coverURL: nil,
                    byline: nil, tags: index == 2 ? ["rest"] : [])
                let article = try await env.database.run(
                    CreateArticle(slug: nil, content: content), context: env.context(.expert))
                _ = try await env.database.run(
                    MoveArticle(id: article.id, move: .submit), context: env.context(.expert))
                env.clock.advance(by: 60)
                slugs.append(
                    try await env.database.run(
                        MoveArticle(id: article.id, move: .approve), context: env.context(.backendManager)
                    ).slug)
            }
            let published = slugs
            try await env.withApp { client in
                let first = try await client.call(.get, "/v1/articles/published?limit=2", token: app)
                let page = try first.decode(Components.Schemas.PublishedArticlePage.self)
                #expect(page.items.map(\.slug) == [published[2], published[1]])
                let cursor = try #require(page.nextCursor)
                let escaped = try #require(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let second = try await client.call(.get, "/v1/articles/published?limit=2&cursor=\(escaped)", token: app)
                let rest = try second.decode(Components.Schemas.PublishedArticlePage.self)
                #expect(rest.items.map(\.slug) == [published[0]] && rest.nextCursor == nil)
                let sleep = try await client.call(.get, "/v1/articles/published?category=sleep&tag=rest", token: app)
                #expect(
                    try sleep.decode(Components.Schemas.PublishedArticlePage.self).items.map(\.slug) == [published[2]])
                #expect(try await client.call(.get, "/v1/articles/published?limit=51", token: app).status == 422)

                let etag = try #require(first.headers[.eTag])
                let again = try await client.call(
                    .get, "/v1/articles/published?limit=2", token: app, headers: ["If-None-Match": etag])
                #expect(again.status == 304 && again.text.isEmpty)
                let one = try await client.call(.get, "/v1/articles/published/\(published[0])", token: app)
                let oneTag = try #require(one.headers[.eTag])
                #expect(
                    try await client.call(
                        .get, "/v1/articles/published/\(published[0])", token: app, headers: ["If-None-Match": oneTag]
                    ).status == 304)
            }
            let newest = try await env.database.read(
                ListArticles(state: .published, after: nil, limit: 1), context: env.context(.backendManager))[0]
            _ = try await env.database.run(
                MoveArticle(id: newest.id, move: .archive, comment: "Outdated"),
                context: env.context(.backendManager))
            try await env.withApp { client in
                let after = try await client.call(.get, "/v1/articles/published?limit=2", token: app)
                #expect(after.status == 200)
                #expect(
                    try after.decode(Components.Schemas.PublishedArticlePage.self).items.map(\.slug) == [
                        published[1], published[0],
                    ])
                #expect(try await client.call(.get, "/v1/articles/published/\(newest.slug)", token: app).status == 404)
            }
        }
    }
}
