import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The access log: hash-chained, verified online and offline, tampering found, 30 reads at once")
struct AccessLogTests {
    /// Runs statements as the superuser with the append-only triggers off, as an attacker with full access would.
    static func tamper(_ env: TestEnvironment, _ statements: [String]) async throws {
        try await env.owner.withConnection(logger: testLogger) { connection in
            try await connection.query("SET session_replication_role = replica", logger: testLogger)
            for sql in statements { try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) }
        }
    }

    @Test(
        """
        30 reads at once write exactly 30 events and the lanes verify; the export verifies offline with the \
        audit log's verifier; an edited purpose is found online and offline, naming the event
        """
    )
    func chained() async throws {
        try await TestEnvironment.with { env in
            let customers = [try await env.customer(), try await env.customer(), try await env.customer()]
            let manager = env.fixture.tokens[.backendManager]!
            let auditor = env.fixture.tokens[.auditor]!
            try await env.withApp { client in
                for customer in customers {
                    _ = try await HealthProfilesAPITests.sync(client, env, customer, HealthProfilesAPITests.profile)
                }
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<30 {
                        let path = HealthProfilesAPITests.path(customers[index % 3])
                        group.addTask {
                            try await client.call(.get, "\(path)?purpose=safety_review", token: manager).status
                        }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                #expect(try await HealthProfilesAPITests.accesses(env) == 30, "exactly one event per read")
                let verified = try await client.call(.post, "/v1/health-access-log/verify", token: auditor, json: "{}")
                #expect(verified["intact"] == "1" && verified["events"] == "30", "\(verified.text)")

                let export = try await client.call(.get, "/v1/health-access-log/export", token: auditor)
                #expect(export.status == 200)
                let lines = export.text.split(separator: "\n")
                #expect(lines.count == 30)
                #expect(!export.text.contains("72.5"), "the log holds who and why, never a value")
                var offline = OfflineAuditVerifier()
                for line in lines { offline.feed(line: Array(line.utf8)) }
                let result = offline.finish()
                #expect(result.failure == nil && result.events == 30, "\(String(describing: result.failure))")

                let victim = try #require(
                    try await env.ownerScalar(
                        "SELECT id FROM health_access_events ORDER BY id LIMIT 1 OFFSET 7", as: Int64.self))
                try await Self.tamper(env, ["UPDATE health_access_events SET purpose = 'audit' WHERE id = \(victim)"])
                let tampered = try await client.call(.post, "/v1/health-access-log/verify", token: auditor, json: "{}")
                #expect(tampered["intact"] == "0", "\(tampered.text)")
                let failure = tampered.json["failure"] as? [String: Any]
                #expect(
                    (failure?["event_id"] as? NSNumber)?.int64Value == victim && failure?["kind"] as? String == "edited"
                )

                let edited = try await client.call(.get, "/v1/health-access-log/export", token: auditor)
                var again = OfflineAuditVerifier()
                for line in edited.text.split(separator: "\n") { again.feed(line: Array(line.utf8)) }
                #expect(again.finish().failure?.eventID == victim, "offline, the same event is named")

                try await Self.tamper(
                    env,
                    [
                        "UPDATE health_access_events SET purpose = 'safety_review' WHERE id = \(victim)",
                        "DELETE FROM health_access_events WHERE id = (SELECT max(id) FROM health_access_events)",
                    ])
                let truncated = try await client.call(.post, "/v1/health-access-log/verify", token: auditor, json: "{}")
                #expect(truncated["intact"] == "0", "the newest event deleted: its lane ends short of its head")
                let partner = try await client.call(
                    .post, "/v1/health-access-log/verify", token: env.fixture.partners[0].adminToken, json: "{}")
                #expect(partner.status == 403)
            }
        }
    }
}

@Suite("The calorie review: Mifflin–St Jeor against worked examples, and its flags")
struct CalorieReviewTests {
    /// 2026-06-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_780_272_000)

    static func values(
        kg: Int, cm: Int, age: Int, sex: HealthValues.Sex, goal: HealthValues.WeightGoal = .keep, kcal: Int,
        activity: HealthValues.ActivityLevel = .sedentary, target: Int? = nil, weeks: Double? = nil
    ) -> HealthValues {
        HealthValues(
            heightCM: cm, weightHG: kg * 10, birthYear: 2026 - age, sex: sex, weightGoal: goal,
            targetWeightHG: target.map { $0 * 10 }, targetDate: weeks.map { now.addingTimeInterval($0 * 7 * 86_400) },
            dailyCalorieGoal: kcal, activityLevel: activity)
    }

    @Test("the published worked examples: BMR and the day's energy with the activity factor")
    func workedExamples() {
        // A 25-year-old man, 180 cm, 80 kg: 10 × 80 + 6.25 × 180 − 5 × 25 + 5 = 1,805 kcal.
        let man = CalorieReview(Self.values(kg: 80, cm: 180, age: 25, sex: .male, kcal: 2_500), at: Self.now)
        #expect(man.basalMetabolicRate == 1_805 && man.dailyEnergy == 2_166, "× 1.2 sedentary")
        // A 30-year-old woman, 165 cm, 60 kg: 600 + 1,031.25 − 150 − 161 = 1,320.25; × 1.55 moderate = 2,046.4.
        let woman = CalorieReview(
            Self.values(kg: 60, cm: 165, age: 30, sex: .female, kcal: 2_000, activity: .moderate), at: Self.now)
        #expect(woman.basalMetabolicRate == 1_320 && woman.dailyEnergy == 2_046)
        // Every factor, on the man's BMR.
        let factors: [(HealthValues.ActivityLevel, Int)] = [
            (.sedentary, 2_166), (.light, 2_482), (.moderate, 2_798), (.active, 3_114), (.veryActive, 3_430),
        ]
        for (level, energy) in factors {
            let review = CalorieReview(
                Self.values(kg: 80, cm: 180, age: 25, sex: .male, kcal: 2_500, activity: level), at: Self.now)
            #expect(review.dailyEnergy == energy, "\(level)")
        }
        // Not said: the mean of the two constants (−78).
        #expect(CalorieReview.basalMetabolicRate(weightKG: 70, heightCM: 170, age: 40, sex: .notSaid) == 1_484.5)
    }

    @Test("flags: a goal under the floor by sex, a loss faster than 1 kg a week by the plan or by the deficit")
    func flags() {
        let low: [(HealthValues.Sex, Int, Bool)] = [
            (.female, 1_199, true), (.female, 1_200, false), (.male, 1_499, true), (.male, 1_500, false),
            (.other, 1_199, true), (.notSaid, 1_250, false),
        ]
        for (sex, kcal, flagged) in low {
            let review = CalorieReview(Self.values(kg: 50, cm: 150, age: 70, sex: sex, kcal: kcal), at: Self.now)
            #expect(review.flags.contains(.lowCalorieGoal) == flagged, "\(sex) \(kcal)")
        }
        // 90 → 80 kg in 5 weeks is 2 kg a week; in 10 weeks, exactly 1 (not faster).
        let fast = CalorieReview(
            Self.values(kg: 90, cm: 180, age: 40, sex: .male, goal: .lose, kcal: 2_100, target: 80, weeks: 5),
            at: Self.now)
        #expect(fast.flags == [.fastPlannedLoss] && fast.plannedLossPerWeek == 2)
        let steady = CalorieReview(
            Self.values(kg: 90, cm: 180, age: 40, sex: .male, goal: .lose, kcal: 2_100, target: 80, weeks: 10),
            at: Self.now)
        #expect(steady.flags.isEmpty, "\(steady)")
        let over = CalorieReview(
            Self.values(kg: 90, cm: 180, age: 40, sex: .male, goal: .lose, kcal: 2_100, target: 80, weeks: -1),
            at: Self.now)
        #expect(over.flags.isEmpty, "a plan whose day has passed is over: \(over)")
        // No target: 1,500 kcal against 2,196 a day is (2,196 − 1,500) × 7 / 7,700 ≈ 0.63 kg a week; very active
        // (3,477 a day), 1.8.
        let deficit = CalorieReview(Self.values(kg: 90, cm: 180, age: 40, sex: .male, kcal: 1_500), at: Self.now)
        #expect(!deficit.flags.contains(.fastPlannedLoss))
        let steep = CalorieReview(
            Self.values(kg: 90, cm: 180, age: 40, sex: .male, kcal: 1_500, activity: .veryActive), at: Self.now)
        #expect(steep.flags == [.fastPlannedLoss], "\(steep)")
    }

    @Test("ranges hide values: bands of ten, calories in bands of 250")
    func ranges() {
        let profile = HealthProfile(
            customerID: UUID(), values: Self.values(kg: 72, cm: 168, age: 36, sex: .female, kcal: 1_800),
            version: 1, syncedAt: Self.now, weights: [])
        let ranges = profile.ranges(at: Self.now)
        #expect(ranges.heightCM == "160–169" && ranges.weightKG == "70–79" && ranges.age == "30–39")
        #expect(ranges.dailyCalorieGoal == "1750–1999" && ranges.targetWeightKG == nil)
    }
}
