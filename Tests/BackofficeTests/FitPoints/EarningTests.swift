import Backoffice
import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@Suite("Earning rules and activity ingestion")
struct EarningTests {
    static let rules = #"""
        {"metrics":[{"metric":"steps","points_per_unit":0.01,"daily_cap":100},
                    {"metric":"workout_minutes","points_per_unit":1,"daily_cap":60,"min_intensity":"moderate"},
                    {"metric":"distance_m","points_per_unit":0.29,"daily_cap":1000}],
         "badges":[{"badge":"first-5k","points":50}],
         "events":[{"event":"subscription_renewal","points":200}]}
        """#

    func event(_ id: String, _ customer: String, _ metric: String, _ value: Double, at time: Date, details: String? = nil) -> String {
        let details = details.map { #","details":\#($0)"# } ?? ""
        return
            #"{"event_id":"\#(id)","customer_id":"\#(customer)","metric":"\#(metric)","value":\#(value),"occurred_at":"\#(RFC3339DateTranscoder.format(time))"\#(details)}"#
    }

    func ingest(_ client: any TestClientProtocol, _ token: String, _ events: [String]) async throws -> Components.Schemas.ActivityBatchOutcome {
        let reply = try await client.call(.post, "/v1/activity", token: token, json: #"{"events":[\#(events.joined(separator: ","))]}"#)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        return try reply.decode(Components.Schemas.ActivityBatchOutcome.self)
    }

    /// Every transfer and every balance, to compare the whole ledger before and after.
    func ledgerState(_ env: TestEnvironment) async throws -> String {
        try await env.ownerScalar(
            """
            SELECT coalesce(string_agg(line, ';' ORDER BY line), '') FROM (
                SELECT format('%s>%s:%s:%s:%s:%s', debit_account, credit_account, amount, rule_id, rule_version, source_event_id) AS line FROM fitpoints_transfers
                UNION ALL SELECT format('%s=%s', id, balance) FROM fitpoints_accounts
                UNION ALL SELECT format('%s/%s/%s=%s,%s', customer_id, rule_id, day, units, points) FROM fitpoints_daily_earnings) s
            """, as: String.self) ?? ""
    }

    @Test("rules are validated field by field (422 naming the field, nothing set), versioned, and identical rules set nothing")
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
                let fields = try Set(bad.decode(Components.Schemas.Problem.self).errors?.map { "\($0.field):\($0.code)" } ?? [])
                #expect(
                    fields == [
                        "metrics[0].metric:unknown_metric", "metrics[1].points_per_unit:not_positive", "metrics[2].daily_cap:invalid_cap",
                        "metrics[3].daily_cap:invalid_cap", "metrics[4].points_per_unit:not_positive", "metrics[4].daily_cap:invalid_cap",
                        "metrics[5].min_intensity:not_allowed", "badges[0].badge:invalid_badge", "events[0].event:unknown_event",
                        "events[1].points:invalid_points",
                    ])
                #expect(try await client.call(.get, "/v1/fitpoints/rules", token: manager).status == 404, "nothing was set")

                let first = try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: Self.rules)
                #expect(first.status == 201)
                let set = try first.decode(Components.Schemas.EarningRuleSet.self)
                #expect(set.version == 1)
                #expect(set.metrics.map(\.ruleId) == ["steps", "workout_minutes", "distance_m"])
                #expect(set.badges.map(\.ruleId) == ["badge:first-5k"])
                #expect(set.events.map(\.ruleId) == ["event:subscription_renewal"])
                let same = try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: Self.rules)
                #expect(same.status == 200)
                #expect(try same.decode(Components.Schemas.EarningRuleSet.self).version == 1)
                let changed = try await client.call(
                    .put, "/v1/fitpoints/rules", token: manager, json: #"{"metrics":[{"metric":"steps","points_per_unit":0.02,"daily_cap":100}]}"#)
                #expect(try changed.decode(Components.Schemas.EarningRuleSet.self).version == 2)
                #expect(try await client.call(.get, "/v1/fitpoints/rules", token: env.fixture.tokens[.appService]!)["version"] == "2")
                #expect(try await client.call(.put, "/v1/fitpoints/rules", token: env.fixture.tokens[.auditor]!, json: Self.rules).status == 403)
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE action = 'fitpoints_rules.set'", as: Int.self) == 2)
        }
    }

    @Test("each event is accepted, duplicate or rejected with its reason; ingesting the same batch twice leaves the ledger exactly as once")
    func ingestOnce() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let ada = try await env.customer().id.uuidString.lowercased()
            let bo = try await env.customer().id.uuidString.lowercased()
            let gone = try await env.customer()
            // The capped events below must fall on one UTC day (the cap is per day): before 02:00, move on to 02:00.
            let intoDay = env.clock.now().timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)
            if intoDay < 7_200 { env.clock.advance(by: 7_200 - intoDay) }
            let now = env.clock.now()
            let lift = #"{"exercise":"squat","weight_kg":100,"reps":5,"bodyweight_kg":80,"sex":"male"}"#
            let batch = [
                event("s1", ada, "steps", 5000, at: now.addingTimeInterval(-3600)),
                event("s2", ada, "steps", 6000, at: now.addingTimeInterval(-1800)),
                event("w1", ada, "workout_minutes", 30, at: now.addingTimeInterval(-1200), details: #"{"met":7.0,"bodyweight_kg":70}"#),
                event("w2", bo, "workout_minutes", 45, at: now.addingTimeInterval(-1200), details: #"{"met":2.0}"#),
                event("d1", bo, "distance_m", 100, at: now.addingTimeInterval(-600)),
                event("l1", bo, "lift", 500, at: now.addingTimeInterval(-600), details: lift),
                event("s1", ada, "steps", 99999, at: now.addingTimeInterval(-60)),
                event("x1", ada, "heartbeats", 70, at: now),
                event("x2", ada, "steps", 10, at: now.addingTimeInterval(3600)),
                event("x3", UUID().uuidString, "steps", 10, at: now),
                event("x4", gone.id.uuidString.lowercased(), "steps", 10, at: now),
                event("x5", "not-a-uuid", "steps", 10, at: now),
                event("x6", bo, "lift", 500, at: now, details: #"{"exercise":"squat","weight_kg":100,"reps":5}"#),
                event("x7", bo, "steps", -5, at: now),
                event("x8", bo, "steps", 5, at: now.addingTimeInterval(-31 * 86_400)),
                event("x9", bo, "steps", 1e300, at: now),
            ]
            try await env.withApp { client in
                #expect(try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: Self.rules).status == 201)
                #expect(
                    try await client.call(.delete, "/v1/customers/\(gone.id.uuidString.lowercased())", token: manager, json: #"{"reason":"asked"}"#)
                        .status == 200)
                let once = try await ingest(client, app, batch)
                #expect((once.accepted, once.duplicates, once.rejected) == (6, 1, 9))
                let byID = Dictionary(once.events.map { ($0.eventId + ($0.status == .duplicate ? "#dup" : ""), $0) }, uniquingKeysWith: { a, _ in a })
                #expect(byID["s1"]?.points == 50)
                #expect(byID["s2"]?.points == 50, "5,000 + 6,000 steps at 0.01 is 110: capped at 100 for the day")
                #expect(byID["w1"]?.points == 30)
                #expect(byID["w2"]?.points == 0, "a light workout does not meet the rule's moderate minimum")
                #expect(byID["d1"]?.points == 29, "100 m at 0.29 is 29 exactly, not 28 by binary rounding")
                #expect(byID["l1"]?.points == 0, "no rule pays lifts")
                #expect(byID["s1#dup"]?.status == .duplicate)
                #expect(
                    once.events.filter { $0.status == .rejected }.map { "\($0.eventId):\($0.reason ?? "")" } == [
                        "x1:unknown_metric", "x2:in_the_future", "x3:unknown_customer", "x4:account_deleted", "x5:invalid_customer_id",
                        "x6:missing_details", "x7:invalid_value", "x8:too_old", "x9:value_out_of_range",
                    ])
                #expect(once.points == 159)
                let stateOnce = try await ledgerState(env)

                let twice = try await ingest(client, app, batch)
                #expect((twice.accepted, twice.duplicates, twice.rejected) == (0, 7, 9))
                #expect(twice.points == 0)
                #expect(try await ledgerState(env) == stateOnce, "the second ingestion changed nothing")

                let entries = try await client.call(.get, "/v1/customers/\(ada)/fitpoints/ledger", token: manager).decode(
                    Components.Schemas.LedgerPage.self)
                #expect(
                    Set(entries.items.map { "\($0.sourceEventId ?? ""):\($0.ruleId ?? ""):\($0.ruleVersion ?? 0):\($0.points)" }) == [
                        "s1:steps:1:50", "s2:steps:1:50", "w1:workout_minutes:1:30",
                    ])
                #expect(try await client.call(.get, "/v1/customers/\(ada)/fitpoints", token: manager)["balance"] == "130")
            }
            let stored = try await env.ownerScalar(
                "SELECT format('%s %s %s %s', value, score, intensity, details->>'kilocalories') FROM activity_events WHERE event_id = 'w1'",
                as: String.self)
            #expect(stored == "30 30 vigorous 245", "7 MET × 70 kg × 0.5 h = 245 kcal")
            let wilks = try await env.ownerScalar("SELECT score FROM activity_events WHERE event_id = 'l1'", as: Double.self)
            let expected = StrengthPoints.wilks(totalKg: 100 * (1 + 5.0 / 30), bodyweightKg: 80, sex: .male)
            #expect(abs((wilks ?? 0) - expected) < 1e-9, "a lift ranks by the Wilks points of its Epley one-rep max")
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE action = 'activity.ingest'", as: Int.self) == 2)
            #expect(try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test("a day's points do not depend on batching; concurrent copies of a batch pay once; a locked account earns nothing")
    func batchingAndConcurrency() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let whole = try await env.customer().id.uuidString.lowercased()
            let split = try await env.customer().id.uuidString.lowercased()
            let locked = try await env.customer().id.uuidString.lowercased()
            let now = env.clock.now()
            @Sendable func steps(_ customer: String, _ prefix: String) -> [String] {
                (0..<12).map { event("\(prefix)\($0)", customer, "steps", 1234.5, at: now.addingTimeInterval(Double(-3600 + $0))) }
            }
            try await env.withApp { client in
                #expect(try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: Self.rules).status == 201)
                _ = try await ingest(client, app, steps(whole, "a"))
                for event in steps(split, "b") { _ = try await ingest(client, app, [event]) }
                let wholeBalance = try await client.call(.get, "/v1/customers/\(whole)/fitpoints", token: manager)["balance"]
                #expect(wholeBalance == "100", "12 × 1,234.5 steps = 148 points, capped at 100")
                #expect(try await client.call(.get, "/v1/customers/\(split)/fitpoints", token: manager)["balance"] == wholeBalance)

                let copies = steps(try await env.customer().id.uuidString.lowercased(), "c")
                let outcomes = try await withThrowingTaskGroup(of: Components.Schemas.ActivityBatchOutcome.self) { group in
                    for _ in 0..<3 { group.addTask { try await ingest(client, app, copies) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(outcomes.map(\.accepted).reduce(0, +) == 12, "every event accepted exactly once across the copies")
                #expect(outcomes.map(\.points).reduce(0, +) == 100)

                #expect(
                    try await client.call(.post, "/v1/customers/\(locked)/lock", token: manager, json: #"{"reason":"fraud check"}"#).status == 200)
                let lockedOutcome = try await ingest(client, app, [event("k1", locked, "steps", 5000, at: now)])
                #expect(lockedOutcome.accepted == 1)
                #expect(lockedOutcome.points == 0, "a locked account records its activity but earns nothing")
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test("the dry run shows what draft rules would have paid per metric and in total beside what was paid, and changes nothing")
    func simulation() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let ada = try await env.customer().id.uuidString.lowercased()
            let bo = try await env.customer().id.uuidString.lowercased()
            let now = env.clock.now()
            try await env.withApp { client in
                #expect(try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: Self.rules).status == 201)
                _ = try await ingest(
                    client, app,
                    [
                        event("s1", ada, "steps", 15000, at: now.addingTimeInterval(-600)),
                        event("s2", bo, "steps", 3000, at: now.addingTimeInterval(-600)),
                        event("w1", ada, "workout_minutes", 20, at: now.addingTimeInterval(-600), details: #"{"met":8}"#),
                    ])
                let before = try await ledgerState(env)
                let reply = try await client.call(
                    .post, "/v1/fitpoints/rules/simulations", token: manager,
                    json:
                        #"{"days":7,"rules":{"metrics":[{"metric":"steps","points_per_unit":0.02,"daily_cap":250},{"metric":"calories_burned","points_per_unit":1,"daily_cap":5}]}}"#
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
                #expect(try await client.call(.get, "/v1/fitpoints/rules", token: manager)["version"] == "1", "nothing activated")
                let invalid = try await client.call(
                    .post, "/v1/fitpoints/rules/simulations", token: manager,
                    json: #"{"days":0,"rules":{"metrics":[{"metric":"x","points_per_unit":1,"daily_cap":1}]}}"#)
                #expect(invalid.status == 422)
            }
        }
    }

    @Test("a batch holds 1 to 5,000 events")
    func batchLimits() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            let customer = try await env.customer().id.uuidString.lowercased()
            let now = env.clock.now()
            try await env.withApp { client in
                let empty = try await client.call(.post, "/v1/activity", token: app, json: #"{"events":[]}"#)
                #expect(empty.status == 422)
                let tooMany = (0...5000).map { event("e\($0)", customer, "steps", 1, at: now) }
                let refused = try await client.call(.post, "/v1/activity", token: app, json: #"{"events":[\#(tooMany.joined(separator: ","))]}"#)
                #expect(refused.status == 422)
                #expect(try refused.decode(Components.Schemas.Problem.self).errors?.first?.code == "too_many")
                let full = try await ingest(client, app, Array(tooMany.dropLast()))
                #expect(full.accepted == 5000)
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM activity_events", as: Int.self) == 5000)
        }
    }
}

@Suite("Account rewards")
struct AccountRewardTests {
    @Test("a subscription that starts or renews earns its event points once per period; a repeated sync earns nothing more")
    func subscriptionEvents() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let id = UUID().uuidString.lowercased()
            let renewsAt = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(30 * 86_400))
            let renewedAt = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(60 * 86_400))
            @Sendable func sync(_ client: any TestClientProtocol, _ subscription: String) async throws -> Int {
                try await client.call(
                    .post, "/v1/customers", token: app, json: #"{"id":"\#(id)","email":"sub@example.com","display_name":"Sub",\#(subscription)}"#
                ).status
            }
            try await env.withApp { client in
                #expect(try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: EarningTests.rules).status == 201)
                #expect(try await sync(client, #""subscription":"none""#) == 201)
                #expect([200, 201].contains(try await sync(client, #""subscription":"active","renews_at":"\#(renewsAt)""#)))
                #expect(try await sync(client, #""subscription":"active","renews_at":"\#(renewsAt)""#) == 200)
                #expect(try await client.call(.get, "/v1/customers/\(id)/fitpoints", token: manager)["balance"] == "0", "no rule pays a start")
                #expect(try await sync(client, #""subscription":"active","renews_at":"\#(renewedAt)""#) == 200)
                #expect(try await sync(client, #""subscription":"active","renews_at":"\#(renewedAt)""#) == 200)
                let ledger = try await client.call(.get, "/v1/customers/\(id)/fitpoints/ledger", token: manager).decode(
                    Components.Schemas.LedgerPage.self)
                #expect(ledger.items.map(\.points) == [200])
                #expect(ledger.items.first?.ruleId == "event:subscription_renewal")
                #expect(ledger.items.first?.sourceEventId == "subscription_renewal:\(id):\(renewedAt)")
            }
            let audited = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_type = 'fitpoints_wallet' AND action = 'accounts.sync'", as: Int.self)
            #expect(audited == 1)
        }
    }
}
