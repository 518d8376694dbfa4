import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

extension DemoEnvironment {
    /// The demo data added after demo databases were first made, each part once: the experts and their
    /// articles, the customers' health profiles, the forum moderator and a queue, the shops' sales history, then
    /// the subscription business's.
    static func seedAddedLater(database: Database, policies: PolicySet) async throws {
        try await seedArticlesOnce(database: database, policies: policies)
        try await seedHealthProfilesOnce(database: database, policies: policies)
        try await seedModerationOnce(database: database, policies: policies)
        try await seedSalesHistoryOnce(database: database, policies: policies)
        try await seedBillingHistoryOnce(database: database, policies: policies)
        try await seedFoodsOnce(database: database, policies: policies)
        try await seedVideosOnce(database: database, policies: policies)
        try await seedRecipesOnce(database: database, policies: policies)
        try await seedPlansOnce(database: database, policies: policies)
        try await seedFeaturedOnce(database: database, policies: policies)
    }

    /// Health profiles for a dozen active customers, each synced weekly for ten weeks (so their pages
    /// have a weight chart), one with a calorie goal under the floor and one planning a fast loss (so
    /// the review's flags show); added once (when no sync was ever audited), also to a demo database
    /// made before health profiles existed. Synced as the app's backend does, each week at its own
    /// time (a clock of its own), so the history spans the ten weeks.
    static func seedHealthProfilesOnce(database: Database, policies: PolicySet) async throws {
        let (customers, synced) = try await survey(database) {
            (
                try await $0.ids("SELECT id FROM customers WHERE status = 'active' ORDER BY email LIMIT 12"),
                try await $0.count("SELECT count(*) FROM audit_events WHERE action = 'health_profiles.sync'")
            )
        }
        guard synced == 0 else { return }
        let app = asApp(.system("demo-health", policies: policies), database)
        let start = database.clock.now().addingTimeInterval(-70 * 86_400)
        for week in 0..<10 {
            let clock = ManualWallClock(start.addingTimeInterval(Double(week) * 7 * 86_400))
            let past = Database(client: database.client, logger: database.logger, clock: clock, ids: database.ids)
            for (index, customer) in customers.enumerated() {
                _ = try await past.runAsSystem(
                    SyncHealthProfile(customerID: customer, entry: entry(index, week: week, firstWeek: start)),
                    context: app)
            }
        }
    }

    /// The `index`th demo customer's profile in `week` (the first week at `firstWeek`): losing, keeping or gaining
    /// a little each week; a target day three to eight months after today.
    private static func entry(_ index: Int, week: Int, firstWeek: Date) -> HealthEntry {
        let goal: HealthValues.WeightGoal = index % 3 == 0 ? .keep : index % 3 == 1 ? .lose : .gain
        let start = 60.0 + Double(index * 7 % 35)
        let change =
            goal == .lose ? -0.6 * Double(week) : goal == .gain ? 0.3 * Double(week) : week % 2 == 0 ? 0.2 : -0.2
        let weight = ((start + change) * 10).rounded() / 10
        let female = index % 2 == 0
        let calories = index == 4 ? 1_100 : goal == .lose ? (female ? 1_600 : 2_000) : female ? 2_000 : 2_500
        return HealthEntry(
            heightCM: female ? 160 + index % 12 : 172 + index % 15, weightKG: weight, birthYear: 1970 + index * 3,
            sex: female ? .female : .male, weightGoal: goal,
            targetWeightKG: goal == .keep ? nil : goal == .lose ? (start - (index == 7 ? 20 : 6)) : start + 4,
            targetDay: goal == .keep
                ? nil
                : HealthEntry.dayText(firstWeek.addingTimeInterval(Double(index % 6 + 3) * 30 * 86_400 + 70 * 86_400)),
            dailyCalorieGoal: calories,
            activityLevel: HealthValues.ActivityLevel.allCases[index % 5])
    }
}
