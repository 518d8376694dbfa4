import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Plans made for one customer: the experts' queue, the profile read for a plan, days checked against the goal")
struct PlansTests {
    /// Another expert, with a token; its id.
    static func expert(_ env: TestEnvironment, _ name: String) async throws -> (token: String, id: UUID) {
        let context = OperationContext.system("test", policies: env.policies)
        let op = try await env.database.runAsSystem(
            CreateOperator(email: "\(name)@test.example", role: .expert, tenantID: nil), context: context)
        let (_, secret) = try await env.database.runAsSystem(
            CreateToken(operatorID: op.id, name: "test", expiresInHours: nil), context: context)
        return (secret.value, op.id)
    }

    /// A live recipe of one serving of 200 g of a food of `kcal` / 2 per 100 g: `kcal` a serving.
    static func liveRecipe(_ env: TestEnvironment, _ client: any TestClientProtocol, kcal: Double, title: String)
        async throws -> String
    {
        let food = try await RecipesTests.liveFood(env, FoodFacts(name: "\(title) base", energyKcal: kcal / 2))
        let body =
            #"{"title":"\#(title)","summary":"One bowl","body":"1. Cook.","servings":1,"tags":[],"#
            + #""ingredients":[{"food_id":"\#(food)","quantity":200,"unit":"g"}]}"#
        let made = try await client.call(.post, "/v1/recipes", token: env.fixture.tokens[.expert]!, json: body)
        let id = try #require(made["id"], "\(made.text)")
        _ = try await client.call(.post, "/v1/recipes/\(id)/submit", token: env.fixture.tokens[.expert]!)
        let approved = try await client.call(
            .post, "/v1/recipes/\(id)/approve", token: env.fixture.tokens[.backendManager]!)
        #expect(approved["state"] == "published", "\(approved.text)")
        return id
    }

    static func request(_ kind: String = "meal", goal: Int? = 1800, changeOf: String? = nil) -> String {
        var fields = [#""kind":"\#(kind)""#, #""goal":"Lose 4 kg before June""#]
        if let goal { fields.append(#""daily_calorie_goal":\#(goal)"#) }
        if let changeOf { fields.append(#""change_of":"\#(changeOf)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Seven days of breakfast, lunch and dinner; `dinner(day)` picks each day's dinner.
    static func week(breakfast: String, lunch: String, dinner: (Int) -> String) -> String {
        let days = (1...7).map { day in
            #"{"meals":[{"meal":"breakfast","recipe_id":"\#(breakfast)","servings":1},"#
                + #"{"meal":"lunch","recipe_id":"\#(lunch)","servings":1},"#
                + #"{"meal":"dinner","recipe_id":"\#(dinner(day))","servings":1}]}"#
        }
        return "[" + days.joined(separator: ",") + "]"
    }

    @Test(
        """
        an expert takes a meal-plan request, reads the customer's profile with the purpose plan (recorded; refused \
        without the hold or with another purpose), composes a week from recipes (a day 30 % over the 1,800 kcal \
        goal warned), sends it; the app reads it; another expert sees neither the request nor the plan
        """
    )
    func mealPlanFromRequestToApp() async throws {
        try await TestEnvironment.with { env in
            let (expert, manager) = (env.fixture.tokens[.expert]!, env.fixture.tokens[.backendManager]!)
            let app = env.fixture.tokens[.appService]!
            let other = try await Self.expert(env, "expert2")
            let customer = try await env.customer()
            try await env.withApp { client in
                let oats = try await Self.liveRecipe(env, client, kcal: 400, title: "Oats")
                let salad = try await Self.liveRecipe(env, client, kcal: 600, title: "Salad")
                let stew = try await Self.liveRecipe(env, client, kcal: 800, title: "Stew")
                let feast = try await Self.liveRecipe(env, client, kcal: 1340, title: "Feast")
                #expect(
                    try await HealthProfilesAPITests.sync(client, env, customer, HealthProfilesAPITests.profile)
                        .status == 200)
                let filed = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/plan-requests", token: app, json: Self.request())
                #expect(filed.status == 201 && filed["status"] == "waiting", "\(filed.text)")
                let requestID = try #require(filed["id"])
                let again = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/plan-requests", token: app, json: Self.request())
                #expect(again.status == 409 && again["code"] == "request_waiting", "\(again.text)")

                let queue = try await client.call(.get, "/v1/plan-requests?kind=meal", token: other.token)
                #expect((queue.json["items"] as? [[String: Any]])?.count == 1, "\(queue.text)")
                let profilePath = "/v1/customers/\(customer.id.text)/health-profile"
                let before = try await HealthProfilesAPITests.accesses(env)
                let unheld = try await client.call(.get, profilePath + "?purpose=plan", token: expert)
                #expect(unheld.status == 403, "no hold, no read: \(unheld.text)")

                let taken = try await client.call(.post, "/v1/plan-requests/\(requestID)/take", token: expert)
                #expect(taken.status == 200 && taken["held_by"] != nil, "\(taken.text)")
                let hidden = try await client.call(.get, "/v1/plan-requests?kind=meal", token: other.token)
                #expect((hidden.json["items"] as? [[String: Any]])?.isEmpty == true, "\(hidden.text)")
                #expect(try await client.call(.get, "/v1/plan-requests/\(requestID)", token: other.token).status == 404)
                let otherPurpose = try await client.call(.get, profilePath + "?purpose=support_request", token: expert)
                #expect(otherPurpose.status == 403, "\(otherPurpose.text)")
                #expect(try await client.call(.get, profilePath + "?purpose=plan", token: other.token).status == 403)
                #expect(try await HealthProfilesAPITests.accesses(env) == before, "a refused read records nothing")
                let read = try await client.call(.get, profilePath + "?purpose=plan", token: expert)
                #expect(read.status == 200 && read.text.contains("1800"), "\(read.text)")
                let recorded = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM health_access_events
                    WHERE customer_id = '\(customer.id)' AND purpose = 'plan' AND actor_role = 'expert'
                    """, as: Int64.self)
                #expect(recorded == 1)

                // 400 + 600 + 800 = 1,800 a day; Friday's feast in place of the stew makes 2,340 (30 % over).
                let days = Self.week(breakfast: oats, lunch: salad) { $0 == 5 ? feast : stew }
                let body = #"{"request_id":"\#(requestID)","note":"Eat slowly.","days":\#(days)}"#
                let notHers = try await client.call(.post, "/v1/plans", token: other.token, json: body)
                #expect(notHers.status == 404, "another's held request is not seen: \(notHers.text)")
                let plan = try await client.call(.post, "/v1/plans", token: expert, json: body)
                #expect(plan.status == 201, "\(plan.text)")
                let planID = try #require(plan["id"])
                let totals = (plan.json["days"] as? [[String: Any]])?.compactMap { $0["kcal"] as? Int }
                #expect(totals == [1800, 1800, 1800, 1800, 2340, 1800, 1800])
                let warnings = try #require(plan.json["warnings"] as? [[String: Any]])
                #expect(warnings.count == 1 && warnings[0]["day"] as? Int == 5, "\(warnings)")
                #expect(warnings.first?["code"] as? String == "above_goal")
                #expect(try await client.call(.get, "/v1/plans/\(planID)", token: other.token).status == 404)
                #expect(try await client.call(.get, "/v1/plans/\(planID)", token: manager).status == 200)

                let unsent = try await client.call(.get, "/v1/customers/\(customer.id.text)/plans", token: app)
                #expect((unsent.json["items"] as? [Any])?.isEmpty == true, "a draft is not the customer's")
                let sent = try await client.call(.post, "/v1/plans/\(planID)/send", token: expert)
                #expect(sent.status == 200 && sent.json["sent_version"] as? Int == 1, "\(sent.text)")
                let twice = try await client.call(.post, "/v1/plans/\(planID)/send", token: expert)
                #expect(twice.status == 409, "\(twice.text)")
                let appRead = try await client.call(.get, "/v1/customers/\(customer.id.text)/plans", token: app)
                let items = try #require(appRead.json["items"] as? [[String: Any]])
                #expect(items.count == 1 && items[0]["note"] as? String == "Eat slowly.", "\(appRead.text)")
                let firstMeal = ((items[0]["days"] as? [[String: Any]])?.first?["meals"] as? [[String: Any]])?.first
                #expect(firstMeal?["title"] as? String == "Oats")
                let etag = try #require(appRead.headers[.eTag])
                let unchanged = try await client.call(
                    .get, "/v1/customers/\(customer.id.text)/plans", token: app, headers: ["If-None-Match": etag])
                #expect(unchanged.status == 304)
                let partner = env.fixture.partners[0].adminToken
                #expect(try await client.call(.get, "/v1/plans/\(planID)", token: partner).status == 403)
            }
            #expect(try await env.auditCount("plans.request") == 1)
            #expect(try await env.auditCount("plans.create") == 1)
            #expect(try await env.auditCount("plans.send") == 2, "the plan and its request")
            let audited = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE after::text LIKE '%Lose 4 kg%' OR after::text LIKE '%1800%'",
                as: Int64.self)
            #expect(audited == 0, "the customer's goal never enters the audit log")
        }
    }

    @Test("30 experts taking one request at once: one holds it; the others are refused and nothing else changes")
    func thirtyTakes() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            var takers: [String] = []
            for index in 0..<30 { takers.append(try await Self.expert(env, "taker\(index)").token) }
            let experts = takers
            try await env.withApp { client in
                let filed = try await client.call(
                    .post, "/v1/customers/\(customer.id.text)/plan-requests", token: env.fixture.tokens[.appService]!,
                    json: Self.request("exercise", goal: nil))
                let id = try #require(filed["id"], "\(filed.text)")
                let takes = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for token in experts {
                        group.addTask { try await client.call(.post, "/v1/plan-requests/\(id)/take", token: token) }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                #expect(takes.filter { $0.status == 200 }.count == 1, "\(takes.map(\.status))")
                #expect(takes.allSatisfy { [200, 404, 409].contains($0.status) }, "\(takes.map(\.status))")
            }
            #expect(try await env.auditCount("plans.take") == 1)
        }
    }

    @Test(
        """
        an exercise plan from a live video and an exercise; a draft video, both or neither of video and exercise, \
        days for an exercise plan, 0 minutes: each 422 by field, nothing stored; a change asked once (409 the \
        second time) is answered by a new version that the app reads
        """
    )
    func exercisePlanAndOneChange() async throws {
        try await TestEnvironment.with { env in
            let (expert, manager) = (env.fixture.tokens[.expert]!, env.fixture.tokens[.backendManager]!)
            let app = env.fixture.tokens[.appService]!
            let trainer = try #require(env.fixture.principals[.expert]?.operatorID).text
            let customer = try await env.customer()
            try await env.withApp { client in
                let video = try #require(
                    try await client.call(
                        .post, "/v1/videos", token: expert, json: VideosTests.draft(trainer: trainer))[
                            "id"])
                let draftVideo = try #require(
                    try await client.call(
                        .post, "/v1/videos", token: expert, json: VideosTests.draft(trainer: trainer))[
                            "id"])
                _ = try await client.call(.post, "/v1/videos/\(video)/submit", token: expert)
                _ = try await client.call(.post, "/v1/videos/\(video)/approve", token: manager)
                let path = "/v1/customers/\(customer.id.text)/plan-requests"
                let requestID = try #require(
                    try await client.call(.post, path, token: app, json: Self.request("exercise", goal: nil))["id"])
                _ = try await client.call(.post, "/v1/plan-requests/\(requestID)/take", token: expert)
                func plan(_ weeks: String, days: Bool = false) -> String {
                    #"{"request_id":"\#(requestID)","note":"Three a week.","\#(days ? "days" : "weeks")":\#(weeks)}"#
                }
                let session = { (fields: String) in #"[{"sessions":[{"day":1,\#(fields)}]}]"# }
                for (body, field) in [
                    (plan(session(#""video_id":"\#(draftVideo)","minutes":30"#)), "weeks[0].sessions[0].video_id"),
                    (plan(session(#""video_id":"\#(video)","exercise":"Run","minutes":30"#)), "exercise"),
                    (plan(session(#""minutes":30"#)), "exercise"),
                    (plan(session(#""exercise":"Run","minutes":0"#)), "minutes"),
                    (plan("[]", days: true), "kind_mismatch"),
                ] {
                    let refused = try await client.call(.post, "/v1/plans", token: expert, json: body)
                    #expect(refused.status == 422 && refused.text.contains(field), "\(field): \(refused.text)")
                }
                #expect(try await env.ownerScalar("SELECT count(*) FROM plans", as: Int64.self) == 0)
                let weeks =
                    #"[{"sessions":[{"day":1,"video_id":"\#(video)","minutes":30},"#
                    + #"{"day":3,"exercise":"Brisk walk","minutes":45}]}]"#
                let made = try await client.call(.post, "/v1/plans", token: expert, json: plan(weeks))
                #expect(made.status == 201, "\(made.text)")
                let planID = try #require(made["id"])
                let week = (made.json["weeks"] as? [[String: Any]])?.first
                #expect(week?["minutes"] as? Int == 75)
                #expect((week?["sessions"] as? [[String: Any]])?.first?["title"] as? String == "Treadmill intervals")
                #expect(try await client.call(.post, "/v1/plans/\(planID)/send", token: expert).status == 200)

                let change = Self.request("exercise", goal: nil, changeOf: planID)
                let asked = try await client.call(.post, path, token: app, json: change)
                #expect(asked.status == 201, "\(asked.text)")
                let second = try await client.call(.post, path, token: app, json: change)
                #expect(second.status == 409 && second["code"] == "change_asked", "\(second.text)")
                let changeID = try #require(asked["id"])
                let content = #"{"note":"Two a week.","weeks":\#(weeks)}"#
                let stale = try await client.call(.put, "/v1/plans/\(planID)", token: expert, json: content)
                #expect(stale.status == 428 || stale["code"] == "not_held", "\(stale.text)")
                _ = try await client.call(.post, "/v1/plan-requests/\(changeID)/take", token: expert)
                let updated = try await client.call(
                    .put, "/v1/plans/\(planID)", token: expert, json: content, headers: ["If-Match": "\"1\""])
                #expect(updated.status == 200 && updated.json["version"] as? Int == 2, "\(updated.text)")
                let before = try await client.call(.get, "/v1/customers/\(customer.id.text)/plans", token: app)
                #expect((before.json["items"] as? [[String: Any]])?.first?["note"] as? String == "Three a week.")
                #expect(try await client.call(.post, "/v1/plans/\(planID)/send", token: expert).status == 200)
                let after = try await client.call(.get, "/v1/customers/\(customer.id.text)/plans", token: app)
                let items = after.json["items"] as? [[String: Any]]
                #expect(items?.count == 1 && items?.first?["note"] as? String == "Two a week.", "\(after.text)")
                #expect(items?.first?["version"] as? Int == 2)
            }
        }
    }

    @Test(
        """
        the database itself admits an expert's read of a profile only with the purpose plan, as itself, while it \
        holds a waiting request of that customer: without the hold, with another purpose, for another customer, \
        naming another actor, or once the request is answered, health_access_append refuses and records nothing
        """
    )
    func databaseAdmitsOnlyAHeldPlanRead() async throws {
        try await TestEnvironment.with { env in
            let expert = try #require(env.fixture.principals[.expert])
            let me = try #require(expert.operatorID)
            let (customer, other) = (try await env.customer(), try await env.customer())
            func append(_ who: UUID, _ purpose: String, for customer: Customer) async -> Problem? {
                await env.asService(
                    expert,
                    """
                    SELECT health_access_append('\(customer.id)', '\(who)', '\(purpose)', 'api', 'test', NULL, NULL)
                    """)
            }
            #expect(await append(me, "plan", for: customer)?.status == 403, "no hold")
            let request = try await env.database.run(
                FilePlanRequest(customerID: customer.id, kind: .exercise, goal: "Run", dailyCalorieGoal: nil),
                context: env.context(.appService))
            _ = try await env.database.run(TakePlanRequest(requestID: request.id), context: env.context(.expert))
            #expect(await append(me, "support_request", for: customer)?.status == 403, "another purpose")
            #expect(await append(me, "plan", for: other)?.status == 403, "another customer")
            #expect(await append(UUID(), "plan", for: customer)?.status == 403, "another actor")
            #expect(try await HealthProfilesAPITests.accesses(env) == 0)
            #expect(await append(me, "plan", for: customer) == nil, "held, for a plan: recorded")
            #expect(try await HealthProfilesAPITests.accesses(env) == 1)
            try await env.asOwner("UPDATE plan_requests SET status = 'answered', answered_at = now()")
            #expect(await append(me, "plan", for: customer)?.status == 403, "answered")
            #expect(try await HealthProfilesAPITests.accesses(env) == 1)
        }
    }

    @Test("a day's calories against the goal: within ±10 % no warning; below and above named with the day")
    func warnings() {
        func day(_ kcal: Double) -> MealDay {
            var meal = PlannedMeal(meal: "lunch", recipeID: UUID(), servings: 1)
            meal.kilocalories = kcal
            return MealDay(meals: [meal])
        }
        let warned = PlanWarning.days([day(2000), day(1800), day(1799), day(2200), day(2201)], goal: 2000)
        #expect(warned.map(\.day) == [3, 5])
        #expect(warned.map(\.code) == [.belowGoal, .aboveGoal])
        #expect(PlanWarning.days([day(100)], goal: nil).isEmpty)
    }
}
