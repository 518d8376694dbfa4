import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension EarningTests {
    @Test(
        """
        each event is accepted, duplicate or rejected with its reason; ingesting the same batch twice leaves the \
        ledger exactly as once
        """
    )
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
                event(
                    "w1", ada, "workout_minutes", 30, at: now.addingTimeInterval(-1200),
                    details: #"{"met":7.0,"bodyweight_kg":70}"#),
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
                #expect(try await EarningTests.setRules(client, env, Self.rules).status == 200)
                #expect(
                    try await client.call(
                        .delete, "/v1/customers/\(gone.id.uuidString.lowercased())", token: manager,
                        json: #"{"reason":"asked"}"#
                    )
                    .status == 200)
                let once = try await ingest(client, app, batch)
                #expect((once.accepted, once.duplicates, once.rejected) == (6, 1, 9))
                let byID = Dictionary(
                    once.events.map { ($0.eventId + ($0.status == .duplicate ? "#dup" : ""), $0) },
                    uniquingKeysWith: { a, _ in a })
                #expect(byID["s1"]?.points == 50)
                #expect(byID["s2"]?.points == 50, "5,000 + 6,000 steps at 0.01 is 110: capped at 100 for the day")
                #expect(byID["w1"]?.points == 30)
                #expect(byID["w2"]?.points == 0, "a light workout does not meet the rule's moderate minimum")
                #expect(byID["d1"]?.points == 29, "100 m at 0.29 is 29 exactly, not 28 by binary rounding")
                #expect(byID["l1"]?.points == 0, "no rule pays lifts")
                #expect(byID["s1#dup"]?.status == .duplicate)
                #expect(
                    once.events.filter { $0.status == .rejected }.map { "\($0.eventId):\($0.reason ?? "")" } == [
                        "x1:unknown_metric", "x2:in_the_future", "x3:unknown_customer", "x4:account_deleted",
                        "x5:invalid_customer_id",
                        "x6:missing_details", "x7:invalid_value", "x8:too_old", "x9:value_out_of_range",
                    ])
                #expect(once.points == 159)
                let stateOnce = try await ledgerState(env)

                let twice = try await ingest(client, app, batch)
                #expect((twice.accepted, twice.duplicates, twice.rejected) == (0, 7, 9))
                #expect(twice.points == 0)
                #expect(try await ledgerState(env) == stateOnce, "the second ingestion changed nothing")

                let entries = try await client.call(.get, "/v1/customers/\(ada)/fitpoints/ledger", token: manager)
                    .decode(
                        Components.Schemas.LedgerPage.self)
                #expect(
                    Set(
                        entries.items.map {
                            "\($0.sourceEventId ?? ""):\($0.ruleId ?? ""):\($0.ruleVersion ?? 0):\($0.points)"
                        }) == [
                            "s1:steps:1:50", "s2:steps:1:50", "w1:workout_minutes:1:30",
                        ])
                #expect(
                    try await client.call(.get, "/v1/customers/\(ada)/fitpoints", token: manager)["balance"] == "130")
            }
            let stored = try await env.ownerScalar(
                """
                SELECT format('%s %s %s %s', value, score, intensity, details->>'kilocalories') FROM \
                activity_events WHERE event_id = 'w1'
                """,
                as: String.self)
            #expect(stored == "30 30 vigorous 245", "7 MET × 70 kg × 0.5 h = 245 kcal")
            let wilks = try await env.ownerScalar(
                "SELECT score FROM activity_events WHERE event_id = 'l1'", as: Double.self)
            let expected = StrengthPoints.wilks(totalKg: 100 * (1 + 5.0 / 30), bodyweightKg: 80, sex: .male)
            #expect(abs((wilks ?? 0) - expected) < 1e-9, "a lift ranks by the Wilks points of its Epley one-rep max")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'activity.ingest'", as: Int.self) == 2)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test(
        """
        a day's points do not depend on batching; concurrent copies of a batch pay once; a locked account earns \
        nothing
        """
    )
    func batchingAndConcurrency() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let whole = try await env.customer().id.uuidString.lowercased()
            let split = try await env.customer().id.uuidString.lowercased()
            let locked = try await env.customer().id.uuidString.lowercased()
            let now = env.clock.now()
            @Sendable func steps(_ customer: String, _ prefix: String) -> [String] {
                (0..<12).map {
                    event("\(prefix)\($0)", customer, "steps", 1234.5, at: now.addingTimeInterval(Double(-3600 + $0)))
                }
            }
            try await env.withApp { client in
                #expect(try await EarningTests.setRules(client, env, Self.rules).status == 200)
                _ = try await ingest(client, app, steps(whole, "a"))
                for event in steps(split, "b") { _ = try await ingest(client, app, [event]) }
                let wholeBalance = try await client.call(.get, "/v1/customers/\(whole)/fitpoints", token: manager)[
                    "balance"]
                #expect(wholeBalance == "100", "12 × 1,234.5 steps = 148 points, capped at 100")
                #expect(
                    try await client.call(.get, "/v1/customers/\(split)/fitpoints", token: manager)["balance"]
                        == wholeBalance)

                let copies = steps(try await env.customer().id.uuidString.lowercased(), "c")
                let outcomes = try await withThrowingTaskGroup(of: Components.Schemas.ActivityBatchOutcome.self) {
                    group in
                    for _ in 0..<3 { group.addTask { try await ingest(client, app, copies) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(
                    outcomes.map(\.accepted).reduce(0, +) == 12, "every event accepted exactly once across the copies")
                #expect(outcomes.map(\.points).reduce(0, +) == 100)

                #expect(
                    try await client.call(
                        .post, "/v1/customers/\(locked)/lock", token: manager, json: #"{"reason":"fraud check"}"#
                    ).status == 200)
                let lockedOutcome = try await ingest(client, app, [event("k1", locked, "steps", 5000, at: now)])
                #expect(lockedOutcome.accepted == 1)
                #expect(lockedOutcome.points == 0, "a locked account records its activity but earns nothing")
            }
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
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
                let refused = try await client.call(
                    .post, "/v1/activity", token: app, json: #"{"events":[\#(tooMany.joined(separator: ","))]}"#)
                #expect(refused.status == 422)
                #expect(try refused.decode(Components.Schemas.Problem.self).errors?.first?.code == "too_many")
                let full = try await ingest(client, app, Array(tooMany.dropLast()))
                #expect(full.accepted == 5000)
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM activity_events", as: Int.self) == 5000)
        }
    }
}
