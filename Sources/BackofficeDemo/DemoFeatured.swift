import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's featured lists: two published recommendations that feature live videos and recipes,
/// one for customers of 45 and over (the gentlest videos, two light recipes), one for those who want
/// to lose weight (three recipes), so the app's "featured for you" differs by profile.
extension DemoEnvironment {
    static func seedFeaturedOnce(database: Database, policies: PolicySet) async throws {
        let found = try await survey(database) { survey in
            var pieces: [String] = []
            for try await piece in try await survey.connection.query(
                """
                (SELECT 'video:' || w.id FROM videos w JOIN video_versions v ON v.video_id = w.id
                    AND v.version = w.live_version WHERE w.state = 'published' ORDER BY v.met, v.title LIMIT 2)
                UNION ALL
                (SELECT 'recipe:' || r.id FROM recipes r JOIN recipe_versions v ON v.recipe_id = r.id
                    AND v.version = r.live_version WHERE r.state = 'published' ORDER BY v.energy_kcal, v.title LIMIT 5)
                """, logger: survey.logger
            ).decode(String.self) {
                pieces.append(piece)
            }
            return (
                try await survey.count("SELECT count(*) FROM recommendations WHERE cardinality(featured) > 0"), pieces,
                try await survey.operators([managerEmail])[managerEmail]
            )
        }
        guard found.0 == 0, found.1.count == 7, let manager = found.2 else { return }
        let context = OperationContext.system("demo-featured", policies: policies).acting(as: principal(manager))
        var older = Recommendation.Audience()
        older.ageBands = [.from45to59, .from60]
        var losing = Recommendation.Audience()
        losing.weightGoals = [.lose]
        let drafts = [
            RecommendationDraft(
                kind: .exercise, title: "Gentle starts for you",
                body: "Low-impact sessions and light meals to build the habit.", audience: older,
                featured: Array(found.1[0..<4]), validFrom: nil, validUntil: nil),
            RecommendationDraft(
                kind: .nutrition, title: "Light bites that fill you up",
                body: "Three of our lightest recipes, each filling for its calories.", audience: losing,
                featured: Array(found.1[4..<7]), validFrom: nil, validUntil: nil),
        ]
        for draft in drafts {
            let made = try await database.run(CreateRecommendation(draft), context: context)
            _ = try await database.run(PublishRecommendation(id: made.id), context: context)
        }
    }
}
