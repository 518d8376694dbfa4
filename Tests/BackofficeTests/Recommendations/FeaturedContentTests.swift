import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Featured content: the catalogs' featured lists ride a recommendation's audience, live pieces only")
struct FeaturedContentTests {
    /// A customer with a health profile born in `birthYear`.
    static func customer(_ env: TestEnvironment, _ email: String, birthYear: Int) async throws -> Customer {
        let customer = try await env.customer(email)
        let entry = HealthEntry(
            heightCM: 170, weightKG: 70, birthYear: birthYear, sex: .female, weightGoal: .keep, dailyCalorieGoal: 2_000,
            activityLevel: .light)
        _ = try await env.database.run(
            SyncHealthProfile(customerID: customer.id, entry: entry), context: env.context(.appService))
        return customer
    }

    @Test(
        """
        a piece not live (a draft video), not `kind:id`, named twice, or an eleventh is refused by name with \
        nothing stored; published for the 60-plus band, the featured recipe and video reach a customer of 65 in \
        order and not one of 30; an archived video drops out of the feed and its ETag changes
        """
    )
    func cateredAndLive() async throws {
        try await TestEnvironment.with { env in
            let manager = env.context(.backendManager)
            let video = try await ContractFixture.video(env)
            let food = try await RecipesTests.liveFood(env, FoodFacts(name: "Oats", energyKcal: 372))
            let recipe = try await ContractFixture.recipe(env, food: food)
            let trainer = try #require(env.fixture.principals[.expert]?.operatorID)
            let draft = try await env.database.run(
                CreateVideo(content: VideosTests.content(trainer: trainer)), context: env.context(.expert))
            var audience = Recommendation.Audience()
            audience.ageBands = [.from60]
            func recommendation(_ featured: [String]) -> CreateRecommendation {
                CreateRecommendation(
                    RecommendationDraft(
                        kind: .nutrition, title: "For you", body: "Try these.", audience: audience, featured: featured,
                        validFrom: nil, validUntil: nil))
            }
            let (r, v) = ("recipe:\(recipe.id.text)", "video:\(video.id.text)")
            let refusals: [([String], String, String)] = [
                ([r, "video:\(draft.id.text)"], "featured[1]", "not_live"),
                ([r, "pizza:\(video.id.text)"], "featured[1]", "invalid_item"),
                ([r, v, r], "featured[2]", "duplicate"), (Array(repeating: r, count: 11), "featured", "too_many"),
            ]
            for (featured, field, code) in refusals {
                let error = await #expect(throws: DomainError.self) {
                    try await env.database.run(recommendation(featured), context: manager)
                }
                guard case .invalid(let issues)? = error else {
                    Issue.record("\(featured): \(String(describing: error))")
                    continue
                }
                #expect(issues.contains { $0.field == field && $0.code == code }, "\(featured): \(issues)")
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM recommendations", as: Int64.self) == 0)

            let made = try await env.database.run(
                recommendation([r, v.uppercased().replacingOccurrences(of: "VIDEO", with: "video")]), context: manager)
            #expect(made.featured == [r, v], "stored as given, the id in lower case")
            _ = try await env.database.run(PublishRecommendation(id: made.id), context: manager)
            let year = Calendar(identifier: .gregorian).component(.year, from: env.clock.now())
            let older = try await Self.customer(env, "older@example.com", birthYear: year - 65)
            let younger = try await Self.customer(env, "younger@example.com", birthYear: year - 30)
            let app = env.context(.appService)
            let feed = try await env.database.read(CustomerRecommendations(customerID: older.id), context: app)
            #expect(feed.first?.featured.map(\.id) == [recipe.id, video.id])
            #expect(feed.first?.featured.map(\.kind) == ["recipe", "video"])
            #expect(feed.first?.featured.first?.title == recipe.content.title)
            #expect(try await env.database.read(CustomerRecommendations(customerID: younger.id), context: app).isEmpty)

            let before = try await CustomerRecommendationsRequest(customerID: older.id.text).run(
                env.database, context: app)
            _ = try await env.database.run(
                MoveVideo(id: video.id, move: .archive, comment: "Retired"), context: manager)
            let after = try await CustomerRecommendationsRequest(customerID: older.id.text).run(
                env.database, context: app)
            #expect(after.items.first?.featured.map(\.id) == [recipe.id], "the archived video drops out")
            #expect(after.etag != before.etag, "the app's held list is stale")
        }
    }

    @Test(
        """
        a console edit keeps the featured order an API client chose (a recipe before a video, which the \
        form lists after it) and adds a newly ticked piece after them; an unticked one leaves
        """
    )
    func consoleEditKeepsOrder() async throws {
        try await TestEnvironment.with { env in
            let manager = env.context(.backendManager)
            let video = try await ContractFixture.video(env)
            let food = try await RecipesTests.liveFood(env, FoodFacts(name: "Oats", energyKcal: 372))
            let recipe = try await ContractFixture.recipe(env, food: food)
            let (r, v) = ("recipe:\(recipe.id.text)", "video:\(video.id.text)")
            let made = try await env.database.run(
                CreateRecommendation(
                    RecommendationDraft(
                        kind: .nutrition, title: "For you", body: "Try these.", audience: .init(), featured: [r, v],
                        validFrom: nil, validUntil: nil)), context: manager)
            try await env.withApp { client in
                let console = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let path = "/console/recommendations/\(made.id.text)/edit"
                func save(_ ticks: [String], title: String) async throws -> [String] {
                    let form = try await console.get(path)
                    let was = try #require(
                        form.text.after(last: "name=\"featured_was\" value=\"")?.prefix { $0 != "\"" })
                    var fields = [
                        "kind": "nutrition", "title": title, "body": "Try these.", "intent": "save",
                        "featured_was": String(was), "version": try #require(form.text.version),
                    ]
                    for tick in ticks { fields["featured_" + tick.replacingOccurrences(of: ":", with: "_")] = "yes" }
                    #expect(try await console.post(path, fields, csrf: form.csrf).status == 303)
                    return try await env.database.read(GetRecommendation(id: made.id), context: manager).featured
                }
                #expect(try await save([v, r], title: "For you, again") == [r, v], "the order kept")
                let article = try await ContractFixture.articles(env).live
                let a = "article:\(article.id.text)"
                #expect(try await save([a, v, r], title: "For you, more") == [r, v, a], "a new tick after them")
                #expect(try await save([v], title: "For you, less") == [v], "an unticked piece leaves")
            }
        }
    }
}
