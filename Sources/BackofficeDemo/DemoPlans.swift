import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's plan requests: two customers with health profiles ask for a plan, one a meal plan and
/// one an exercise plan, filed as the app's backend files them; both wait in the experts' queue.
extension DemoEnvironment {
    static func seedPlansOnce(database: Database, policies: PolicySet) async throws {
        let (customers, requests) = try await survey(database) { survey in
            let ids = try await survey.ids(
                """
                SELECT c.id FROM customers c WHERE c.status = 'active'
                  AND EXISTS (SELECT FROM audit_events e WHERE e.action = 'health_profiles.sync'
                              AND e.target_id = c.id::text)
                ORDER BY c.email LIMIT 2
                """)
            return (ids, try await survey.count("SELECT count(*) FROM plan_requests"))
        }
        guard requests == 0, customers.count == 2 else { return }
        let app = asApp(.system("demo-plans", policies: policies), database)
        _ = try await database.run(
            FilePlanRequest(
                customerID: customers[0], kind: .meal,
                goal: "A week of simple dinners I can cook after work, no fish.", dailyCalorieGoal: 1_800),
            context: app)
        _ = try await database.run(
            FilePlanRequest(
                customerID: customers[1], kind: .exercise,
                goal: "Get back to running 5 km without stopping, three evenings a week.", dailyCalorieGoal: nil),
            context: app)
    }
}
