import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// The app's two hot reads (the published articles, a customer's recommendations) answered on the
/// hand-encoded path: the same bytes, entity tags and refusals as the generated path, and 304 for a
/// page the app holds, on both.
@Suite("The app's reads on the hand-encoded path: the generated path's bytes, ETags, 304s and refusals")
struct AppReadsFastPathTests {
    /// Each URI's status, body and ETag, fast (hand-encoded) or not; then the same URIs sent again
    /// with the ETag each answered, as `If-None-Match`.
    static func answers(_ env: TestEnvironment, fast: Bool, _ uris: [String], token: String) async throws
        -> [(status: Int, text: String, etag: String?, held: Int, heldTag: String?, heldText: String)]
    {
        try await env.withApp(handEncodedLists: fast) { client in
            var answers: [(Int, String, String?, Int, String?, String)] = []
            for uri in uris {
                let first = try await client.call(.get, uri, token: token)
                let tag = first.headers[.eTag] ?? "none"
                let held = try await client.call(.get, uri, token: token, headers: ["If-None-Match": tag])
                answers.append(
                    (first.status, first.text, first.headers[.eTag], held.status, held.headers[.eTag], held.text))
            }
            return answers
        }
    }

    @Test(
        """
        published articles: every page, filter and cursor is byte for byte the generated path's (bylines, covers \
        and tags present or absent; quotes, slashes and Unicode in the text), with its ETag; a held page is 304
        """
    )
    func publishedArticles() async throws {
        try await TestEnvironment.with { env in
            for (index, category) in ["sleep", "nutrition", "sleep", "mindset"].enumerated() {
                let content = ArticleContent(
                    title: "Ärticle \"\(index)\" </script> / ✓ \u{1F600}", summary: "S\n\t\(index)\\",
                    category: category,
                    body: "Text \(index)", coverURL: index % 2 == 0 ? "https://cdn.example/a/\(index).jpg" : nil,
                    byline: index == 1 ? "Maya Lin, dietitian" : nil, tags: index >= 2 ? ["rest", "zzz"] : [])
                let article = try await env.database.run(
                    CreateArticle(slug: nil, content: content), context: env.context(.expert))
                _ = try await env.database.run(
                    MoveArticle(id: article.id, move: .submit), context: env.context(.expert))
                env.clock.advance(by: 60)
                _ = try await env.database.run(
                    MoveArticle(id: article.id, move: .approve), context: env.context(.backendManager))
            }
            let app = env.fixture.tokens[.appService]!
            let base = "/v1/articles/published"
            let firstPage = try await env.withApp { try await $0.call(.get, "\(base)?limit=2", token: app) }
            let cursor = try #require(
                firstPage["next_cursor"]?.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let uris = [
                base, "\(base)?limit=2", "\(base)?limit=2&cursor=\(cursor)", "\(base)?category=sleep",
                "\(base)?category=sleep&tag=rest", "\(base)?tag=%20REST%20", "\(base)?category=exercise",
                "\(base)?limit=1",
            ]
            let fast = try await Self.answers(env, fast: true, uris, token: app)
            let reference = try await Self.answers(env, fast: false, uris, token: app)
            for (uri, (fast, reference)) in zip(uris, zip(fast, reference)) {
                #expect(fast.status == 200 && fast.text == reference.text, "\(uri): \(fast.text)")
                #expect(fast.etag != nil && fast.etag == reference.etag, "\(uri)")
                #expect(fast.held == 304 && reference.held == 304, "\(uri)")
                #expect(fast.heldTag == fast.etag && fast.heldText.isEmpty, "\(uri)")
            }
            #expect(fast[0].text.contains(#""byline":"Maya Lin, dietitian""#) && fast[0].text.contains("\"cover_url\""))
        }
    }

    @Test(
        """
        a customer's recommendations: byte for byte the generated path's (HTML with quotes and slashes, a window's \
        end present or absent, featured content or none), the same ETag; a held list is 304; an empty list is \
        the generated one too
        """
    )
    func customerRecommendations() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let subscriber = try await env.customer()
            let other = try await env.customer()
            try await env.asOwner("UPDATE customers SET subscription = 'active' WHERE id = '\(subscriber.id)'")
            let video = try await ContractFixture.video(env)
            let food = try await RecipesTests.liveFood(env, FoodFacts(name: "Oats \"rolled\"", energyKcal: 372))
            let recipe = try await ContractFixture.recipe(env, food: food)
            let featured = #""featured":["video:\#(video.id.text)","recipe:\#(recipe.id.text)"],"#
            try await env.withApp { client in
                for (index, until) in [nil, "2099-01-01T00:00:00Z"].enumerated() {
                    let draft = """
                        {"kind":"\(index == 0 ? "exercise" : "nutrition")","title":"Walk \\"\(index)\\" / ✓",\
                        "body":"Ten minutes **after** [dinner](https://example.com/a?b=c&d=\\"e\\").\\n\\n- one",\
                        \(until.map { #""valid_until":"\#($0)","# } ?? "")\(index == 0 ? featured : "")\
                        "audience":{"subscriptions":["active"]}}
                        """
                    let created = try await client.call(.post, "/v1/recommendations", token: manager, json: draft)
                    #expect(created.status == 201, "\(created.text)")
                    let id = try #require(created["id"])
                    #expect(
                        try await client.call(.post, "/v1/recommendations/\(id)/publish", token: manager).status == 200)
                    env.clock.advance(by: 60)
                }
            }
            let uris = [subscriber, other].map { "/v1/customers/\($0.id.text)/recommendations" }
            let fast = try await Self.answers(env, fast: true, uris, token: app)
            let reference = try await Self.answers(env, fast: false, uris, token: app)
            for (uri, (fast, reference)) in zip(uris, zip(fast, reference)) {
                #expect(fast.status == 200 && fast.text == reference.text, "\(uri): \(fast.text)")
                #expect(fast.etag != nil && fast.etag == reference.etag, "\(uri)")
                #expect(fast.held == 304 && reference.held == 304 && fast.heldText.isEmpty, "\(uri)")
            }
            #expect(fast[0].text.contains("valid_until") && fast[0].text.contains("\"html\":\"<"), "\(fast[0].text)")
            #expect(
                fast[0].text.contains(#""featured":[{"id":"\#(video.id.text)","kind":"video""#)
                    && fast[0].text.contains("\"featured\":[]"), "one features a video and a recipe, one nothing")
            #expect(fast[1].text == #"{"items":[]}"#)
        }
    }

    @Test(
        """
        a food by its barcode: byte for byte the generated path's (every figure known, or only energy; a brand \
        with quotes and Unicode; the barcode in each of its forms), the same ETag; a held food is 304
        """
    )
    func foodByBarcode() async throws {
        try await TestEnvironment.with { env in
            let full = FoodFacts(
                name: "Müsli \"crunchy\" / ✓", brand: "Blue \\ Coast", servingGrams: 45, energyKcal: 363.5, fat: 6,
                saturatedFat: 1.25, carbohydrates: 63, sugars: 15, fiber: 8.1, proteins: 10, salt: 0.01,
                allergens: [.gluten, .nuts])
            for (gtin, facts) in [("4006381333931", full), ("036000291452", FoodFacts(name: "Water", energyKcal: 0))] {
                let food = try await env.database.run(
                    CreateFood(gtin: gtin, facts: facts), context: env.context(.expert))
                _ = try await env.database.run(MoveFood(id: food.id, move: .submit), context: env.context(.expert))
                _ = try await env.database.run(
                    MoveFood(id: food.id, move: .approve), context: env.context(.backendManager))
            }
            let app = env.fixture.tokens[.appService]!
            let uris = ["4006381333931", "04006381333931", "036000291452", "0036000291452"].map {
                "/v1/foods/by-barcode/\($0)"
            }
            let fast = try await Self.answers(env, fast: true, uris, token: app)
            let reference = try await Self.answers(env, fast: false, uris, token: app)
            for (uri, (fast, reference)) in zip(uris, zip(fast, reference)) {
                #expect(fast.status == 200 && fast.text == reference.text, "\(uri): \(fast.text) \(reference.text)")
                #expect(fast.etag != nil && fast.etag == reference.etag, "\(uri)")
                #expect(fast.held == 304 && reference.held == 304 && fast.heldText.isEmpty, "\(uri)")
            }
            #expect(fast[0].text.contains("\"saturated_fat_100g\":1.25") && !fast[2].text.contains("brand"))
        }
    }

    @Test(
        "the hand-encoded reads refuse what the generated path refuses, with its status and code",
        arguments: [
            ("/v1/articles/published?category=bogus", Role.appService), ("/v1/articles/published?limit=0", .appService),
            ("/v1/articles/published?limit=51", .appService), ("/v1/articles/published?limit=x", .appService),
            ("/v1/articles/published?cursor=nope", .appService), ("/v1/articles/published", .moderator),
            ("/v1/customers/not-a-uuid/recommendations", .appService),
            ("/v1/customers/00000000-0000-0000-0000-000000000001/recommendations", .expert),
            ("/v1/foods/by-barcode/4006381333932", .appService), ("/v1/foods/by-barcode/4006381333931", .appService),
            ("/v1/foods/by-barcode/4006381333931", .moderator), ("/v1/foods/by-barcode/%20", .appService),
        ])
    func sameRefusals(uri: String, role: Role) async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[role]!
            let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
            let reference = try await env.withApp(handEncodedLists: false) {
                try await $0.call(.get, uri, token: token)
            }
            #expect(fast.status >= 400 && fast.status < 500, "\(uri): \(fast.status)")
            #expect(fast.status == reference.status, "\(uri): \(fast.text) against \(reference.text)")
            #expect(fast["code"] == reference["code"], "\(uri)")
        }
    }
}
