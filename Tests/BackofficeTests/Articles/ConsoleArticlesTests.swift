import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console articles: the expert's desk and editor with the server's preview, the manager's queue, review, diff")
struct ConsoleArticlesTests {
    static let hostile = "# Oats\n\nSlow **energy**.\n\n<script>alert(1)</script><img src=x onerror=alert(2)>"

    static let fields: [String: String] = [
        "title": "Oats for breakfast", "summary": "Slow energy for the morning", "category": "nutrition",
        "tags": "oats, breakfast", "body": "# Oats\n\nSlow energy.\n\nEat them warm.", "intent": "save",
    ]

    /// The id in a `/console/articles/{id}` redirect.
    private func articleID(_ reply: Reply) throws -> String {
        let location = try #require(reply.location, "a redirect")
        return String(location.dropFirst("/console/articles/".count))
    }

    @Test(
        """
        the preview is the server's sanitised rendering (no script, no event attribute) with words and \
        minutes, and changes nothing; a blank title is refused in place with the text kept; a save is a \
        draft, audited via console
        """
    )
    func editorAndPreview() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let expert = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.expert]?.operatorID)
                let editor = try await expert.get("/console/articles/new")
                #expect(editor.status == 200)
                #expect(editor.text.contains("data-preview=\"/console/articles/preview\""))
                let preview = try await expert.post(
                    "/console/articles/preview", ["body": Self.hostile], csrf: editor.csrf)
                #expect(preview.status == 200)
                #expect(preview.text.contains("<h1>Oats</h1>") && preview.text.contains("<strong>energy</strong>"))
                #expect(
                    !preview.text.contains("<script") && !preview.text.contains("onerror"), "inert: \(preview.text)")
                #expect(preview.text.contains("id=\"preview-stats\">3 words · about 1 min to read"), "\(preview.text)")
                let forged = try await expert.post("/console/articles/preview", ["body": "x"], csrf: nil)
                #expect(forged.status == 403, "a preview needs the session's token")

                var asked = Self.fields
                asked["intent"] = "preview"
                asked["body"] = Self.hostile
                let previewed = try await expert.post("/console/articles/new", asked, csrf: editor.csrf)
                #expect(previewed.status == 200 && previewed.text.contains("<h1>Oats</h1>"))
                #expect(!previewed.text.contains("<script>alert"), "the typed script is escaped in the textarea")
                #expect(try await env.ownerScalar("SELECT count(*) FROM articles", as: Int64.self) == 0)

                var blank = Self.fields
                blank["title"] = " "
                let refused = try await expert.post("/console/articles/new", blank, csrf: editor.csrf)
                #expect(refused.status == 422)
                #expect(refused.text.contains("id=\"title-error\"") && refused.text.contains("Eat them warm."))
                #expect(try await env.ownerScalar("SELECT count(*) FROM articles", as: Int64.self) == 0)

                var typed = Self.fields
                typed["body"] = "# Oats\r\n\r\nSlow energy.\r\n\r\nEat them warm."  // as a browser sends a textarea
                let saved = try await expert.post("/console/articles/new", typed, csrf: editor.csrf)
                #expect(saved.status == 303)
                let id = try articleID(saved)
                let page = try await expert.get("/console/articles/\(id)")
                #expect(page.text.contains("<span class=\"tag draft\">draft</span>"))
                #expect(
                    try await env.ownerScalar("SELECT body FROM article_versions", as: String.self)
                        == "# Oats\n\nSlow energy.\n\nEat them warm.", "kept with LF line ends")
                #expect(page.text.contains("Submit for review") && !page.text.contains("Approve and publish"))
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'articles.create' AND target_id = '\(id)' \
                    AND session_id IS NOT NULL
                    """, as: Int64.self)
                #expect(viaConsole == 1)
            }
        }
    }

    @Test(
        """
        expert writes and submits; the manager's queue lists it oldest first; send back needs a comment and \
        shows it on the expert's desk; a stale edit names who saved since; approval publishes for the app; \
        a new version of a live article diffs against the live one
        """
    )
    func reviewRoundTrip() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let expert = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.expert]?.operatorID)
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let editor = try await expert.get("/console/articles/new")
                var first = Self.fields
                first["title"] = "Older submission"
                let older = try articleID(try await expert.post("/console/articles/new", first, csrf: editor.csrf))
                let id = try articleID(try await expert.post("/console/articles/new", Self.fields, csrf: editor.csrf))
                for article in [older, id] {
                    let page = try await expert.get("/console/articles/\(article)")
                    #expect(page.status == 200, "\(page.text)")
                    let submitted = try await expert.post(
                        "/console/articles/\(article)/submit", ["version": try #require(page.text.version)],
                        csrf: page.csrf)
                    #expect(submitted.status == 303)
                    env.clock.advance(by: 60)
                }
                #expect(try await expert.post("/console/articles/\(id)/approve", [:], csrf: editor.csrf).status == 403)

                let list = try await manager.get("/console/articles")
                let queue = try #require(list.text.after(last: "id=\"review-queue\""))
                let (a, b) = (try #require(queue.range(of: "Older submission")), try #require(queue.range(of: "Oats")))
                #expect(a.lowerBound < b.lowerBound, "oldest first")

                let review = try await manager.get("/console/articles/\(id)")
                #expect(review.text.contains("Approve and publish"))
                let uncommented = try await manager.post(
                    "/console/articles/\(id)/send-back", ["comment": " "], csrf: review.csrf)
                #expect(uncommented.status == 422 && uncommented.text.contains("id=\"comment_send_back-error\""))
                let sentBack = try await manager.post(
                    "/console/articles/\(id)/send-back", ["comment": "Cite a source for slow energy."],
                    csrf: review.csrf)
                #expect(sentBack.status == 303)
                let desk = try await expert.get("/console/articles")
                #expect(desk.text.contains("Sent back:</strong> Cite a source for slow energy."))

                let edit = try await expert.get("/console/articles/\(id)/edit")
                let staleVersion = try #require(edit.text.version)
                var changed = Self.fields
                changed["body"] = "# Oats\n\nSlow energy (source: a 2019 review).\n\nEat them warm."
                changed["version"] = staleVersion
                #expect(try await expert.post("/console/articles/\(id)/edit", changed, csrf: edit.csrf).status == 303)
                let stale = try await expert.post("/console/articles/\(id)/edit", changed, csrf: edit.csrf)
                #expect(stale.status == 422, "\(stale.text)")
                #expect(stale.text.contains("expert@") && stale.text.contains("saved a newer version at"))

                let fixed = try await expert.get("/console/articles/\(id)")
                _ = try await expert.post(
                    "/console/articles/\(id)/submit", ["version": try #require(fixed.text.version)], csrf: fixed.csrf)
                let again = try await manager.get("/console/articles/\(id)")
                #expect(try await manager.post("/console/articles/\(id)/approve", [:], csrf: again.csrf).status == 303)
                let app = try await client.call(
                    .get, "/v1/articles/published", token: env.fixture.tokens[.appService]!)
                #expect(app.text.contains("oats-for-breakfast"), "the app's list shows it")

                let live = try await expert.get("/console/articles/\(id)/edit")
                changed["body"] = "# Oats\n\nSlow energy (source: a 2019 review).\n\nEat them warm, with berries."
                changed["version"] = try #require(live.text.version)
                #expect(try await expert.post("/console/articles/\(id)/edit", changed, csrf: live.csrf).status == 303)
                let diff = try await manager.get("/console/articles/\(id)")
                #expect(
                    diff.text.contains("<span class=\"removed\"><span class=\"sign\">−</span> Eat them warm.</span>"))
                #expect(
                    diff.text.contains(
                        "<span class=\"added\"><span class=\"sign\">+</span> Eat them warm, with berries.</span>"))
                #expect(diff.text.contains("Version 2 to version 3"), "the live version against the newest")
            }
        }
    }

    @Test(
        """
        a manager who wrote the version in review is offered no approval and is refused it (403); archiving \
        needs its box ticked; another expert's article is not found in the console
        """
    )
    func fourEyesAndOwnership() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let editor = try await manager.get("/console/articles/new")
                let id = try articleID(try await manager.post("/console/articles/new", Self.fields, csrf: editor.csrf))
                let draft = try await manager.get("/console/articles/\(id)")
                _ = try await manager.post(
                    "/console/articles/\(id)/submit", ["version": try #require(draft.text.version)], csrf: draft.csrf)
                let review = try await manager.get("/console/articles/\(id)")
                #expect(!review.text.contains("Approve and publish"))
                #expect(review.text.contains("You wrote this version, so someone else approves it."))
                #expect(try await manager.post("/console/articles/\(id)/approve", [:], csrf: review.csrf).status == 403)
                let unticked = try await manager.post(
                    "/console/articles/\(id)/archive", ["comment": "Duplicate"], csrf: review.csrf)
                #expect(unticked.status == 422 && unticked.text.contains("id=\"confirm_archive-error\""))
                #expect(try await env.auditCount("articles.archive") == 0)
                let archived = try await manager.post(
                    "/console/articles/\(id)/archive", ["comment": "Duplicate", "confirm": "yes"], csrf: review.csrf)
                #expect(archived.status == 303)
                #expect(try await env.auditCount("articles.archive") == 1)

                let expert = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.expert]?.operatorID)
                #expect(try await expert.get("/console/articles/\(id)").status == 404, "the manager's article")
                #expect(try await expert.get("/console/articles/\(id)/edit").status == 404)
                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let read = try await auditor.get("/console/articles/\(id)")
                #expect(read.status == 200 && !read.text.contains("Archive</button>") && !read.text.contains("Edit"))
                #expect(try await auditor.get("/console/articles/new").status == 403)
            }
        }
    }
}
