import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Earning rules and activity ingestion")
struct EarningTests {
    static let rules = #"""
        {"metrics":[{"metric":"steps","points_per_unit":0.01,"daily_cap":100},
                    {"metric":"workout_minutes","points_per_unit":1,"daily_cap":60,"min_intensity":"moderate"},
                    {"metric":"distance_m","points_per_unit":0.29,"daily_cap":1000}],
         "badges":[{"badge":"first-5k","points":50}],
         "events":[{"event":"subscription_renewal","points":200}]}
        """#

    /// Puts `json` in force as managers do: a backend manager's change, held (policies/approvals.yaml
    /// holds every change of the earning rules), then a platform admin's approval. The approval's
    /// answer (200: the rules are in force), or the change's own when it was not held.
    static func setRules(_ client: any TestClientProtocol, _ env: TestEnvironment, _ json: String = rules)
        async throws -> Reply
    {
        let held = try await client.call(
            .put, "/v1/fitpoints/rules", token: env.fixture.tokens[.backendManager]!, json: json)
        guard held.status == 202 else { return held }
        let request = try held.decode(Components.Schemas.ApprovalRequest.self)
        return try await ApprovalTests().decide(client, env.fixture.tokens[.platformAdmin]!, request.id, "approve")
    }

    func event(
        _ id: String, _ customer: String, _ metric: String, _ value: Double, at time: Date, details: String? = nil
    ) -> String {
        let details = details.map { #","details":\#($0)"# } ?? ""
        return
            #"""
            {"event_id":"\#(id)","customer_id":"\#(customer)","metric":"\#(metric)","value":\#(value),\#
            "occurred_at":"\#(RFC3339DateTranscoder.format(time))"\#(details)}
            """#
    }

    func ingest(_ client: any TestClientProtocol, _ token: String, _ events: [String]) async throws
        -> Components.Schemas.ActivityBatchOutcome
    {
        let reply = try await client.call(
            .post, "/v1/activity", token: token, json: #"{"events":[\#(events.joined(separator: ","))]}"#)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        return try reply.decode(Components.Schemas.ActivityBatchOutcome.self)
    }

    /// Every transfer and every balance, to compare the whole ledger before and after.
    func ledgerState(_ env: TestEnvironment) async throws -> String {
        try await env.ownerScalar(
            """
            SELECT coalesce(string_agg(line, ';' ORDER BY line), '') FROM (
                SELECT format('%s>%s:%s:%s:%s:%s', debit_account, credit_account, amount, rule_id, rule_version,
                    source_event_id) AS line FROM fitpoints_transfers
                UNION ALL SELECT format('%s=%s', id, balance) FROM fitpoints_accounts
                UNION ALL SELECT format('%s/%s/%s=%s,%s', customer_id, rule_id, day, units, points) FROM
                    fitpoints_daily_earnings) s
            """, as: String.self) ?? ""
    }

    @Test(
        """
        rules are validated field by field (422 naming the field, nothing set), versioned, and identical rules \
        set nothing
        """
    )
    func rulesValidation() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                #expect(try await client.call(.get, "/v1/fitpoints/rules", token: manager).status == 404)
                let bad = try await client.call(
                    .put, "/v1/fitpoints/rules", token: manager,
                    json: #"""
                        {"metrics":[{"metric":"heartbeats","points_per_unit":1,"daily_cap":10},
                                    {"metric":"steps","points_per_unit":0,"daily_cap":10},
                                    {"metric":"distance_m","points_per_unit":1,"daily_cap":1.5},
                                    {"metric":"calories_burned","points_per_unit":1},
                                    {"metric":"steps","points_per_unit":-2,"daily_cap":0},
                                    {"metric":"lift","points_per_unit":1,"daily_cap":10,"min_intensity":"vigorous"}],
                         "badges":[{"badge":"Not A Slug","points":5}],
                         "events":[{"event":"birthday","points":5},{"event":"subscription_renewal","points":2.5}]}
                        """#)
                #expect(bad.status == 422)
                let fields = try Set(
                    bad.decode(Components.Schemas.Problem.self).errors?.map { "\($0.field):\($0.code)" } ?? [])
                #expect(
                    fields == [
                        "metrics[0].metric:unknown_metric", "metrics[1].points_per_unit:not_positive",
                        "metrics[2].daily_cap:invalid_cap",
                        "metrics[3].daily_cap:invalid_cap", "metrics[4].points_per_unit:not_positive",
                        "metrics[4].daily_cap:invalid_cap",
                        "metrics[5].min_intensity:not_allowed", "badges[0].badge:invalid_badge",
                        "events[0].event:unknown_event",
                        "events[1].points:invalid_points",
                    ])
                #expect(
                    try await client.call(.get, "/v1/fitpoints/rules", token: manager).status == 404, "nothing was set")

                let held = try await client.call(
                    .put, "/v1/fitpoints/rules", token: manager, json: #"{"metrics":[],"reason":"Launch"}"#)
                #expect(held.status == 202, "every change of the rules waits for a second person")
                #expect(held["summary"] == "Set the earning rules: none" && held["reason"] == "Launch")
                #expect(try await client.call(.get, "/v1/fitpoints/rules", token: manager).status == 404)
                #expect(try await Self.setRules(client, env).status == 200)
                let set = try await client.call(.get, "/v1/fitpoints/rules", token: manager).decode(
                    Components.Schemas.EarningRuleSet.self)
                #expect(set.version == 1)
                #expect(set.metrics.map(\.ruleId) == ["steps", "workout_minutes", "distance_m"])
                #expect(set.badges.map(\.ruleId) == ["badge:first-5k"])
                #expect(set.events.map(\.ruleId) == ["event:subscription_renewal"])
                let same = try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: Self.rules)
                #expect(same.status == 409 && same["code"] == "nothing_to_approve", "identical rules: nothing held")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM approval_requests", as: Int.self) == 2,
                    "the first request, the one approved; none for identical rules")
                let stale = try await client.call(
                    .put, "/v1/fitpoints/rules", token: manager,
                    json: #"{"metrics":[{"metric":"steps","points_per_unit":0.05,"daily_cap":100}]}"#)
                #expect(stale.status == 202)
                #expect(stale.json["change"] != nil, "the whole change, for the approver")
                let changed = try await Self.setRules(
                    client, env, #"{"metrics":[{"metric":"steps","points_per_unit":0.02,"daily_cap":100}]}"#)
                #expect(changed.status == 200)
                let late = try await ApprovalTests().decide(
                    client, env.fixture.tokens[.platformAdmin]!, try #require(stale["id"]), "approve")
                #expect(
                    late.status == 409 && late["code"] == "rules_changed", "approving it now would undo version 2")
                #expect(
                    try await client.call(.get, "/v1/fitpoints/rules", token: env.fixture.tokens[.appService]!)[
                        "version"] == "2")
                #expect(
                    try await client.call(
                        .put, "/v1/fitpoints/rules", token: env.fixture.tokens[.auditor]!, json: Self.rules
                    ).status == 403)
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'fitpoints_rules.set'", as: Int.self) == 2)
        }
    }

    @Test(
        """
        the dry run shows what draft rules would have paid per metric and in total beside what was paid, and \
        changes nothing
        """
    )
    func simulation() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let ada = try await env.customer().id.uuidString.lowercased()
            let bo = try await env.customer().id.uuidString.lowercased()
            let now = env.clock.now()
            try await env.withApp { client in
                #expect(try await Self.setRules(client, env).status == 200)
                _ = try await ingest(
                    client, app,
                    [
                        event("s1", ada, "steps", 15000, at: now.addingTimeInterval(-600)),
                        event("s2", bo, "steps", 3000, at: now.addingTimeInterval(-600)),
                        event(
                            "w1", ada, "workout_minutes", 20, at: now.addingTimeInterval(-600), details: #"{"met":8}"#),
                    ])
                let before = try await ledgerState(env)
                let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let reply = try await client.call(
                    .post, "/v1/fitpoints/rules/simulations", token: manager,
                    json:
                        #"""
                        {"days":7,"rules":{"metrics":[{"metric":"steps","points_per_unit":0.02,"daily_cap":250},\#
                        {"metric":"calories_burned","points_per_unit":1,"daily_cap":5}]}}
                        """#
                )
                #expect(reply.status == 200)
                let simulation = try reply.decode(Components.Schemas.EarningRulesSimulation.self)
                let lines = Dictionary(uniqueKeysWithValues: simulation.lines.map { ($0.ruleId, $0) })
                #expect(lines["steps"]?.points == 310, "15,000 × 0.02 = 300 capped at 250, plus 3,000 × 0.02")
                #expect(lines["steps"]?.currentPoints == 130, "100 (capped) + 30 paid by the rules in force")
                #expect((lines["steps"]?.events, lines["steps"]?.customers) == (2, 2))
                #expect(lines["calories_burned"]?.points == 0)
                #expect(lines["workout_minutes"]?.points == 0, "the draft has no workout rule")
                #expect(lines["workout_minutes"]?.currentPoints == 20)
                #expect((simulation.points, simulation.currentPoints) == (310, 150))
                #expect(try await ledgerState(env) == before)
                #expect(
                    try await client.call(.get, "/v1/fitpoints/rules", token: manager)["version"] == "1",
                    "nothing activated")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events,
                    "nothing audited")
                let invalid = try await client.call(
                    .post, "/v1/fitpoints/rules/simulations", token: manager,
                    json: #"{"days":0,"rules":{"metrics":[{"metric":"x","points_per_unit":1,"daily_cap":1}]}}"#)
                #expect(invalid.status == 422)
            }
        }
    }
}
