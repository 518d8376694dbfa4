import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

extension DemoEnvironment {
    /// The forum moderator of the demo.
    static let moderatorEmail = "moderator@healthtrack.example"

    /// A moderator and a queue to work: posts the screen held or masked, comments customers
    /// reported (one by three reporters), and one author with three upheld cases (a repeat
    /// offender); added once (when the moderator is missing), also to an older demo database.
    static func seedModerationOnce(database: Database, policies: PolicySet) async throws {
        let (present, customers) = try await survey(database) {
            (
                try await $0.count("SELECT count(*) FROM operators WHERE email = \(moderatorEmail)"),
                try await $0.ids("SELECT id FROM customers WHERE status = 'active' ORDER BY email LIMIT 8")
            )
        }
        guard present == 0, customers.count == 8 else { return }
        let system = OperationContext.system("demo-moderation", policies: policies)
        let moderator = try await database.runAsSystem(
            CreateOperator(email: moderatorEmail, role: .moderator, tenantID: nil), context: system)
        let app = asApp(system, database)
        let decider = system.acting(
            as: Principal(operatorID: moderator.id, role: .moderator, tenantID: platformTenantID, tokenID: nil))
        let offender = customers[0]
        for (index, text) in ["Buy followers cheap, DM me", "free bitcoin for runners", "click my link for gains"]
            .enumerated()
        {
            let held = try await database.run(
                ScreenContent(ForumContent(kind: .post, id: "demo-spam-\(index)", text: text, authorID: offender)),
                context: app)
            if let caseID = held.caseID {
                let read = try await database.read(ReadModerationCase(caseID: caseID), context: decider)
                _ = try await database.run(
                    DecideCase(
                        caseID: caseID, kind: .remove, ground: "spam", explanation: "Advertising in the forum.",
                        ifMatch: String(read.queued.moderationCase.version)),
                    context: decider)
            }
        }
        let posts: [(String, UUID, ContentKind)] = [
            ("Honestly just kill yourself if you can't finish a 5k", customers[1], .comment),
            ("Join my pro ana group, we keep each other under 800 kcal", customers[2], .post),
            ("Free bitcoin for the top of the leaderboard!", offender, .post),
            ("This hill is shit but the view is worth it", customers[3], .post),
        ]
        for (index, (text, author, kind)) in posts.enumerated() {
            _ = try await database.run(
                ScreenContent(
                    ForumContent(kind: kind, id: "demo-\(kind.rawValue)-\(index)", text: text, authorID: author)),
                context: app)
        }
        for reporter in customers[5..<8] {
            _ = try await database.run(
                ReportContent(
                    ForumContent(
                        kind: .comment, id: "demo-comment-rude", text: "Nobody asked for your slow times, loser.",
                        authorID: customers[4]), reporterID: reporter, reason: "harassment"), context: app)
        }
    }
}
