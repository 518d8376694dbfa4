import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console moderation: the queue, taking the next case, deciding with a ground, the statement of reasons")
struct ConsoleModerationTests {
    @Test(
        """
        a moderator takes the next case from the queue, a decision without a ground is refused by field and \
        changes nothing, a lock with a ground decides it and shows the statement; another moderator sees the held \
        case read-only; a decision on a text that changed since the page was read is 412 and the page shows the \
        new text; the account page shows the author's record
        """
    )
    func takeAndDecide() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer("author@example.com")
            let held = try await env.database.run(
                ScreenContent(ForumContent(kind: .post, id: "p-1", text: "kys, nobody likes you", authorID: author.id)),
                context: env.context(.appService))
            let caseID = try #require(held.caseID).text
            let other = try await ModerationAPITests.secondModerator(env)
            try await env.withApp { client in
                let moderator = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.moderator]?.operatorID)
                let queue = try await moderator.get("/console/moderation")
                #expect(queue.status == 200 && queue.text.contains("kys, nobody likes you"), "\(queue.text)")
                let taken = try await moderator.post("/console/moderation/next", [:], csrf: queue.csrf)
                #expect(taken.status == 303 && taken.location == "/console/moderation/cases/\(caseID)")
                let page = try await moderator.get("/console/moderation/cases/\(caseID)")
                #expect(page.text.contains("id=\"decision-form\"") && page.text.contains("en.self_harm"))

                let otherClient = try await ConsoleClient.signedIn(env, client, as: other.id)
                let readOnly = try await otherClient.get("/console/moderation/cases/\(caseID)")
                #expect(readOnly.text.contains("id=\"held-notice\"") && !readOnly.text.contains("id=\"decision-form\""))

                let refused = try await moderator.post(
                    "/console/moderation/cases/\(caseID)/decision", ["decision": "lock", "explanation": "x"],
                    csrf: page.csrf)
                #expect(refused.status == 422 && refused.text.contains("id=\"ground-error\""))
                #expect(try await env.auditCount("moderation.decide") == 0)
                let seen = try #require(page.text.firstMatch(of: /name="version" value="([0-9]+)"/)?.output.1)
                _ = try await env.database.run(
                    ScreenContent(
                        ForumContent(kind: .post, id: "p-1", text: "edited: kys, all of you", authorID: author.id)),
                    context: env.context(.appService))
                let lock = ["decision": "lock", "ground": "safety", "explanation": "Encouraged self-harm."]
                let stale = try await moderator.post(
                    "/console/moderation/cases/\(caseID)/decision", lock.merging(["version": String(seen)]) { $1 },
                    csrf: page.csrf)
                #expect(stale.status == 412 && stale.text.contains("The case changed since you opened it"))
                #expect(stale.text.contains("edited: kys, all of you"), "the page shows the text as it is now")
                #expect(try await env.auditCount("moderation.decide") == 0)
                let now = try #require(stale.text.firstMatch(of: /name="version" value="([0-9]+)"/)?.output.1)
                #expect(Int(now)! > Int(seen)!)
                let decided = try await moderator.post(
                    "/console/moderation/cases/\(caseID)/decision", lock.merging(["version": String(now)]) { $1 },
                    csrf: page.csrf)
                #expect(decided.status == 303)
                let statement = try await moderator.get("/console/moderation/cases/\(caseID)")
                #expect(
                    statement.text.contains("class=\"statement\"") && statement.text.contains("Encouraged self-harm."))
                #expect(statement.text.contains("Keep each other safe") && statement.text.contains("appeal"))
                #expect(!statement.text.contains("id=\"decision-form\""), "a decided case has no form")
                #expect(!statement.text.contains("id=\"overturned\""), "not lifted on appeal")

                let account = try await moderator.get("/console/accounts/\(author.id.text)")
                #expect(account.text.contains("id=\"moderation-record\"") && account.text.contains("upheld cases: 1"))
            }
            #expect(try await env.auditCount("moderation.decide") == 1)
            #expect(try await env.auditCount("accounts.lock") == 1)
        }
    }
}
