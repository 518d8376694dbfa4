import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Challenges and badges")
struct ChallengesTests {
    func at(_ env: TestEnvironment, _ seconds: TimeInterval) -> String {
        RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(seconds))
    }

    func steps(_ id: String, _ customer: String, _ value: Double, at time: String) -> String {
        #"""
        {"event_id":"\#(id)","customer_id":"\#(customer)","metric":"steps","value":\#(value),\#
        "occurred_at":"\#(time)"}
        """#
    }

    func ingest(_ client: any TestClientProtocol, _ token: String, _ events: [String]) async throws {
        let reply = try await client.call(
            .post, "/v1/activity", token: token, json: #"{"events":[\#(events.joined(separator: ","))]}"#)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
    }

    func create(
        _ client: any TestClientProtocol, _ env: TestEnvironment, _ token: String, budget: Int, extra: String = ""
    ) async throws -> String {
        let reply = try await client.call(
            .post, "/v1/challenges", token: token,
            json: #"""
                {"name":"Winter Steps","metric":"steps","aggregation":"sum","starts_at":"\#(at(env, -3600))",\#
                "ends_at":"\#(at(env, 3600))",
                 "grace_period":"PT2H","target":10000,"budget_points":\#(budget),
                 "rewards":{"ranks":[{"from":1,"to":1,"points":100,"badge":"winter-champion"},\#
                {"from":2,"to":3,"points":50}],"target":{"points":10}}\#(extra)}
                """#)
        #expect(reply.status == 201, "\(reply.text.prefix(300))")
        let id = try #require(reply["id"])
        #expect(try await client.call(.post, "/v1/challenges/\(id)/publish", token: token).status == 200)
        return id
    }

    @Test(
        """
        three customers tied at the top share rank 1 (standard); late events count until the grace period ends, \
        then the board freezes; settling twice awards each of them once
        """
    )
    func tiesGraceAndSettlement() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            var customers: [String] = []
            for _ in 0..<6 { customers.append(try await env.customer().id.uuidString.lowercased()) }
            let (a, b, c, d, e, locked) = (
                customers[0], customers[1], customers[2], customers[3], customers[4], customers[5]
            )
            try await env.withApp { client in
                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager,
                        json: #"{"slug":"winter-champion","name":"Winter Champion"}"#
                    ).status
                        == 201)
                let id = try await create(client, env, manager, budget: 1000)
                #expect(try await client.call(.get, "/v1/challenges/\(id)", token: manager)["state"] == "active")
                try await ingest(
                    client, app,
                    [
                        steps("a1", a, 7000, at: at(env, -3000)), steps("a2", a, 5000, at: at(env, -2000)),
                        steps("b1", b, 12000, at: at(env, -1000)),
                        steps("c1", c, 12000, at: at(env, -500)), steps("d1", d, 9000, at: at(env, -500)),
                        steps("e1", e, 5000, at: at(env, -500)),
                        steps("f1", locked, 50000, at: at(env, -500)), steps("early", d, 99999, at: at(env, -7200)),
                    ])
                #expect(
                    try await client.call(
                        .post, "/v1/customers/\(locked)/lock", token: manager, json: #"{"reason":"bot"}"#
                    ).status == 200)

                func board() async throws -> Components.Schemas.Leaderboard {
                    try await client.call(.get, "/v1/challenges/\(id)/leaderboard", token: app).decode(
                        Components.Schemas.Leaderboard.self)
                }
                let live = try await board()
                #expect(live.tiePolicy == .standard)
                #expect(live.entries.map(\.rank) == [1, 1, 1, 4, 5])
                #expect(Set(live.entries.prefix(3).map(\.customerId)) == [a, b, c])
                #expect(
                    live.entries.map(\.customerId).suffix(2) == [d, e],
                    "the locked account never ranks; an event before the window does not count")
                #expect(live.entries.prefix(3).allSatisfy { $0.reachedTarget })

                // Paging gives the same ranks as the whole board.
                var paged: [Int] = []
                var cursor: String? = nil
                repeat {
                    let page = try await client.call(
                        .get, "/v1/challenges/\(id)/leaderboard?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""),
                        token: app
                    ).decode(Components.Schemas.Leaderboard.self)
                    paged += page.entries.map(\.rank)
                    cursor = page.nextCursor
                } while cursor != nil
                #expect(paged == [1, 1, 1, 4, 5])

                env.clock.advance(by: 2 * 3600)  // the window is over; the grace period runs
                #expect(try await client.call(.get, "/v1/challenges/\(id)", token: manager)["state"] == "closed")
                let early = try await client.call(.post, "/v1/challenges/\(id)/settle", token: manager, json: "{}")
                #expect(early.status == 409)
                #expect(early["code"] == "board_not_frozen")
                // dated inside the window: counts
                try await ingest(client, app, [steps("e2", e, 3000, at: at(env, -3 * 3600 + 600))])
                #expect(try await board().entries.last?.score == 8000)

                env.clock.advance(by: 3600)  // the board freezes
                // dated inside the window, too late
                try await ingest(client, app, [steps("d2", d, 90000, at: at(env, -4 * 3600 + 600))])
                let frozen = try await board()
                #expect(frozen.frozen)
                #expect(frozen.entries.map(\.score) == [12000, 12000, 12000, 9000, 8000])

                let dryReply = try await client.call(
                    .post, "/v1/challenges/\(id)/settle", token: manager, json: #"{"dry_run":true}"#)
                #expect(dryReply.status == 200, "\(dryReply.text.prefix(300))")
                let dry = try dryReply.decode(Components.Schemas.ChallengeSettlement.self)
                #expect(dry.dryRun)
                #expect(dry.paid == 330, "three tied winners: 100 each for rank 1 and 10 each for the target")
                #expect(
                    try await client.call(.get, "/v1/customers/\(a)/fitpoints", token: manager)["balance"] == "0",
                    "a dry run pays nothing")

                let settled = try await client.call(.post, "/v1/challenges/\(id)/settle", token: manager, json: "{}")
                #expect(settled.status == 200)
                let settlement = try settled.decode(Components.Schemas.ChallengeSettlement.self)
                #expect(settlement.challenge.state == .settled)
                #expect(Set(settlement.payouts.map(\.customerId)) == [a, b, c])
                #expect(
                    settlement.payouts.allSatisfy {
                        $0.rank == 1 && $0.points == 110 && $0.badges == ["winter-champion"]
                    })
                let again = try await client.call(.post, "/v1/challenges/\(id)/settle", token: manager, json: "{}")
                    .decode(Components.Schemas.ChallengeSettlement.self)
                #expect(again.paid == 330)
                for winner in [a, b, c] {
                    #expect(
                        try await client.call(.get, "/v1/customers/\(winner)/fitpoints", token: manager)["balance"]
                            == "110", "paid once")
                    let badges = try await client.call(.get, "/v1/customers/\(winner)/badges", token: app).decode(
                        Components.Schemas.CustomerBadgeList.self)
                    #expect(badges.items.map(\.badge.slug) == ["winter-champion"])
                }
            }
            let budget = try await env.ownerScalar(
                "SELECT balance FROM fitpoints_accounts WHERE kind = 'challenge_budget'", as: Int64.self)
            #expect(budget == 670, "paid from its own budget")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'challenges.settle'", as: Int.self) == 1)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test("a budget too small for the rewards is refused at settlement (409 budget_exceeded) and nothing is paid")
    func budgetTooSmall() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            var made: [String] = []
            for _ in 0..<3 { made.append(try await env.customer().id.uuidString.lowercased()) }
            let customers = made
            try await env.withApp { client in
                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager,
                        json: #"{"slug":"winter-champion","name":"Winter Champion"}"#
                    ).status
                        == 201)
                let id = try await create(client, env, manager, budget: 200)
                try await ingest(
                    client, app,
                    customers.enumerated().map { steps("s\($0.offset)", $0.element, 12000, at: at(env, -600)) })
                env.clock.advance(by: 4 * 3600)
                let dry = try await client.call(
                    .post, "/v1/challenges/\(id)/settle", token: manager, json: #"{"dry_run":true}"#
                )
                .decode(Components.Schemas.ChallengeSettlement.self)
                #expect((dry.paid, dry.budget, dry.shortfall) == (330, 200, 130))
                let refused = try await client.call(.post, "/v1/challenges/\(id)/settle", token: manager, json: "{}")
                #expect(refused.status == 409)
                #expect(refused["code"] == "budget_exceeded")
                #expect(try await client.call(.get, "/v1/challenges/\(id)", token: manager)["state"] == "closed")
                for customer in customers {
                    #expect(
                        try await client.call(.get, "/v1/customers/\(customer)/fitpoints", token: manager)["balance"]
                            == "0")
                    #expect(
                        try await client.call(.get, "/v1/customers/\(customer)/badges", token: manager).decode(
                            Components.Schemas.CustomerBadgeList.self
                        ).items.isEmpty)
                }
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT balance FROM fitpoints_accounts WHERE kind = 'challenge_budget'", as: Int64.self) == 200)
        }
    }

    @Test(
        """
        drafts are validated field by field; subscribers-only boards rank subscribers; a badge rule awards its \
        badge once, with its points
        """
    )
    func validationEligibilityAndBadgeRules() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let bad = try await client.call(
                    .post, "/v1/challenges", token: manager,
                    json: #"""
                        {"name":"","metric":"heartbeats","aggregation":"median","starts_at":"\#(at(env, 3600))",\#
                        "ends_at":"\#(at(env, 60))",
                         "grace_period":"P1M","tie_policy":"random","eligibility":"vips","budget_points":-5,
                         "rewards":{"ranks":[{"from":0,"to":1,"points":5},{"from":2,"to":3,"points":1.5},\#
                        {"from":4,"to":5,"points":1,"badge":"nope"}],"target":{"points":5}}}
                        """#)
                #expect(bad.status == 422)
                let fields = Set(try bad.decode(Components.Schemas.Problem.self).errors?.map(\.field) ?? [])
                #expect(
                    fields.isSuperset(of: [
                        "name", "metric", "aggregation", "ends_at", "grace_period", "tie_policy", "eligibility",
                        "budget_points",
                        "rewards.ranks[0].from",
                        "rewards.ranks[1].points", "rewards.target", "rewards",
                    ]), "\(fields)")
                #expect(
                    try await client.call(.get, "/v1/challenges", token: manager).decode(
                        Components.Schemas.ChallengePage.self
                    ).items.isEmpty)

                let subscriber = try await env.customer().id.uuidString.lowercased()
                _ = try await client.call(
                    .post, "/v1/customers/\(subscriber)/subscriptions", token: app, json: SubscribeTests.body(),
                    headers: ["Idempotency-Key": UUID().uuidString])
                let other = try await env.customer().id.uuidString.lowercased()
                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager,
                        json: #"{"slug":"winter-champion","name":"Winter Champion"}"#
                    ).status
                        == 201)
                let id = try await create(client, env, manager, budget: 0, extra: #","eligibility":"subscribers""#)
                try await ingest(
                    client, app,
                    [steps("s1", subscriber, 100, at: at(env, -60)), steps("o1", other, 5000, at: at(env, -60))])
                let board = try await client.call(.get, "/v1/challenges/\(id)/leaderboard", token: app).decode(
                    Components.Schemas.Leaderboard.self)
                #expect(board.entries.map(\.customerId) == [subscriber])

                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager,
                        json: #"{"slug":"first-5k","name":"First 5K","metric":"distance_m","threshold":5000}"#
                    ).status == 201)
                #expect(
                    try await EarningTests.setRules(client, env, #"{"badges":[{"badge":"first-5k","points":100}]}"#)
                        .status == 200)
                let run =
                    #"""
                    {"event_id":"r1","customer_id":"\#(other)","metric":"distance_m","value":5200,\#
                    "occurred_at":"\#(at(env, -60))"}
                    """#
                let again =
                    #"""
                    {"event_id":"r2","customer_id":"\#(other)","metric":"distance_m","value":6000,\#
                    "occurred_at":"\#(at(env, -30))"}
                    """#
                try await ingest(client, app, [run])
                try await ingest(client, app, [again])
                let badges = try await client.call(.get, "/v1/customers/\(other)/badges", token: manager).decode(
                    Components.Schemas.CustomerBadgeList.self)
                #expect(badges.items.map(\.badge.slug) == ["first-5k"])
                #expect(
                    try await client.call(.get, "/v1/customers/\(other)/fitpoints", token: manager)["balance"] == "100",
                    "the badge's points, once")
                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager, json: #"{"slug":"first-5k","name":"Again"}"#
                    ).status == 409)
            }
        }
    }
}
