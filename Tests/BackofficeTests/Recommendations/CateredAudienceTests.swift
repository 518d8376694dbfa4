import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Content catered to the customer: audience rules on the health profile, matched inside the database")
struct CateredAudienceTests {
    @Test(
        """
        property: over generated customers (some without a profile) and rules with health parts, what the app \
        reads for each customer is exactly what a Swift filter selects; the dry run answers a count only, \
        withheld under 10, never a sample
        """
    )
    func healthAudienceProperty() async throws {
        try await TestEnvironment.with { env in
            var random = SplitMix64(seed: 0x5EED_0042)
            let now = env.clock.now()
            var customers: [(Customer, HealthValues?)] = []
            for index in 0..<60 {
                let customer = try await env.customer("h\(index)@example.com")
                guard index % 6 != 0 else {  // every sixth has no profile
                    customers.append((customer, nil))
                    continue
                }
                let entry = HealthEntry(
                    heightCM: 150 + index, weightKG: 55 + Double(index % 40), birthYear: 1940 + (index * 7) % 70,
                    sex: HealthValues.Sex.allCases.randomElement(using: &random)!,
                    weightGoal: HealthValues.WeightGoal.allCases.randomElement(using: &random)!,
                    dailyCalorieGoal: 1_800,
                    activityLevel: HealthValues.ActivityLevel.allCases.randomElement(using: &random)!)
                _ = try await env.database.run(
                    SyncHealthProfile(customerID: customer.id, entry: entry), context: env.context(.appService))
                customers.append((customer, try entry.values(at: now)))
            }
            var published: [Recommendation] = []
            for index in 0..<12 {
                var audience = Recommendation.Audience(
                    subscriptions: Set(Subscription.allCases.filter { _ in Bool.random(using: &random) }))
                audience.ageBands = Set(Recommendation.AgeBand.allCases.filter { _ in Bool.random(using: &random) })
                audience.sexes = Set(
                    HealthValues.Sex.allCases.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
                audience.weightGoals = Set(
                    HealthValues.WeightGoal.allCases.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
                audience.activityLevels = Set(
                    HealthValues.ActivityLevel.allCases.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
                let made = try await env.database.run(
                    CreateRecommendation(
                        RecommendationDraft(
                            kind: .nutrition, title: "Rule \(index)", body: "Body \(index)", audience: audience,
                            validFrom: nil, validUntil: nil)), context: env.context(.backendManager))
                #expect(made.audience == audience, "stored and read back whole")
                published.append(
                    try await env.database.run(
                        PublishRecommendation(id: made.id), context: env.context(.backendManager)))
                let reach = try await env.database.read(AudienceReach(audience), context: env.context(.backendManager))
                let expected = customers.filter {
                    $0.0.status == .active && audience.selects($0.0, profile: $0.1, at: now)
                }
                if audience.usesHealth {
                    #expect(reach.sample.isEmpty, "no sample of a health-derived audience")
                    #expect(
                        reach.count == (expected.count < 10 ? nil : expected.count),
                        "rule \(index): \(expected.count) selected, answered \(String(describing: reach.count))")
                } else {
                    #expect(reach.count == expected.count)
                }
            }
            #expect(published.contains { $0.audience.usesHealth })
            for (customer, profile) in customers {
                let read = try await env.database.read(
                    CustomerRecommendations(customerID: customer.id), context: env.context(.appService))
                let expected = published.filter { $0.audience.selects(customer, profile: profile, at: now) }
                #expect(Set(read.map(\.id)) == Set(expected.map(\.id)), "customer \(customer.email)")
            }
            #expect(
                try await HealthProfilesAPITests.accesses(env) == 0, "the feed and the dry run record no person's read")
        }
    }

    @Test(
        """
        the age bands' edges (17, 18, 29, 30, 44, 45, 59, 60); only the app's backend matches a feed and only \
        a manager, an auditor or an admin counts an audience (the database refuses the others)
        """
    )
    func bandsAndWhoMayAsk() async throws {
        let bands = [17, 18, 29, 30, 44, 45, 59, 60].map { Recommendation.AgeBand(age: $0).rawValue }
        #expect(bands == ["under_18", "18_29", "18_29", "30_44", "30_44", "45_59", "45_59", "60_plus"])
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let match = """
                SELECT health_audience_match('\(customer.id)', now(), '{female}', '{}', '{}', '{}')
                """
            let count = "SELECT health_audience_count('{}', now(), '{female}', '{}', '{}', '{}')"
            #expect(await env.asService(env.fixture.principals[.appService]!, match) == nil)
            #expect(await env.asService(env.fixture.principals[.backendManager]!, match)?.status == 403)
            #expect(await env.asService(env.fixture.principals[.expert]!, match)?.status == 403)
            #expect(await env.asService(env.fixture.principals[.backendManager]!, count) == nil)
            #expect(await env.asService(env.fixture.principals[.appService]!, count)?.status == 403)
            #expect(await env.asService(env.fixture.partners[0].admin, count)?.status == 403)
        }
    }
}
