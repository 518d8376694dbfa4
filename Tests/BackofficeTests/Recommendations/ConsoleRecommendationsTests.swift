import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console recommendations: compose with the audience counted in place, publish, retract confirmed")
struct ConsoleRecommendationsTests {
    @Test(
        """
        the compose form counts the rule's reach in place and saves nothing until asked; a draft's page \
        shows its reach; publish and a confirmed retract are audited via console; an auditor reads the \
        reach masked and cannot write
        """
    )
    func composePublishRetract() async throws {
        try await TestEnvironment.with { env in
            let subscriber = try await env.customer("sub.scriber@example.com")
            _ = try await env.customer("no.subscription@example.com")
            try await env.asOwner("UPDATE customers SET subscription = 'lapsed' WHERE id = '\(subscriber.id)'")
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let form = try await manager.get("/console/recommendations/new")
                #expect(form.status == 200 && form.text.contains("<span class=\"count\">2</span> active customers"))
                let fields = [
                    "kind": "nutrition", "title": "Come back for soup", "body": "Soup **warms**.",
                    "subscription_lapsed": "yes",
                ]
                var checking = fields
                checking["intent"] = "check"
                let checked = try await manager.post("/console/recommendations/new", checking, csrf: form.csrf)
                #expect(checked.status == 200)
                #expect(checked.text.contains("<span class=\"count\">1</span> active customers"), "the rule's reach")
                #expect(
                    checked.text.contains("sub.scriber@example.com") && checked.text.contains("<strong>warms</strong>"))
                #expect(try await env.ownerScalar("SELECT count(*) FROM recommendations", as: Int64.self) == 0)

                var saving = fields
                saving["intent"] = "save"
                saving["valid_until"] = "not a time"
                let refused = try await manager.post("/console/recommendations/new", saving, csrf: form.csrf)
                #expect(refused.status == 422 && refused.text.contains("id=\"valid_until-error\""))
                saving["valid_until"] = ""
                let saved = try await manager.post("/console/recommendations/new", saving, csrf: form.csrf)
                #expect(saved.status == 303)
                let path = try #require(saved.location)
                let page = try await manager.get(path)
                #expect(
                    page.text.contains("subscription lapsed") && page.text.contains("<span class=\"count\">1</span>"))
                let version = try #require(page.text.version)
                #expect(try await manager.post("\(path)/publish", ["version": version], csrf: page.csrf).status == 303)
                let live = try await manager.get(path)
                let unticked = try await manager.post(
                    "\(path)/retract", ["version": try #require(live.text.version), "reason": "Winter is over"],
                    csrf: live.csrf)
                #expect(unticked.status == 422 && unticked.text.contains("id=\"confirm_retract-error\""))
                let retracted = try await manager.post(
                    "\(path)/retract",
                    ["version": try #require(live.text.version), "reason": "Winter is over", "confirm": "yes"],
                    csrf: live.csrf)
                #expect(retracted.status == 303)
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action LIKE 'recommendations.%' AND session_id IS NOT NULL
                    """, as: Int64.self)
                #expect(viaConsole == 3, "create, publish, retract")

                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let read = try await auditor.get(path)
                #expect(read.status == 200 && !read.text.contains("Retract</button>"))
                #expect(try await auditor.get("/console/recommendations/new").status == 403)
            }
        }
    }
}
