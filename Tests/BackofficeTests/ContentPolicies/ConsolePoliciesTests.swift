import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console content policies: versions, a diff between two, publishing a new version")
struct ConsolePoliciesTests {
    @Test(
        """
        a manager publishes a new version (audited via console); the page's diff marks the removed and the added \
        line; the same text again publishes nothing; an auditor reads without the form; a partner has no policies
        """
    )
    func versionsAndDiff() async throws {
        try await TestEnvironment.with { env in
            _ = try await env.database.run(
                PublishContentPolicy(slug: "terms", title: "Terms", body: "Be kind.\nNo spam.\nHave fun."),
                context: env.context(.backendManager))
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                #expect(try await manager.get("/console/policies").text.contains("href=\"/console/policies/terms\""))
                let page = try await manager.get("/console/policies/terms")
                #expect(page.status == 200)
                let publishes = try await env.auditCount("content_policies.publish")
                let published = try await manager.post(
                    "/console/policies/terms", ["title": "Terms", "body": "Be kind.\nNo advertising.\nHave fun."],
                    csrf: page.csrf)
                #expect(published.status == 303)
                #expect(try await env.auditCount("content_policies.publish") == publishes + 1)
                let diff = try #require(
                    try await manager.get("/console/policies/terms").text.after(last: "id=\"diff\">"))
                #expect(diff.contains("<span class=\"removed\"><span class=\"sign\">−</span> No spam.</span>"))
                #expect(diff.contains("<span class=\"added\"><span class=\"sign\">+</span> No advertising.</span>"))
                #expect(diff.contains("<span class=\"same\"><span class=\"sign\"> </span> Be kind.</span>"))
                let same = try await manager.post(
                    "/console/policies/terms", ["title": "Terms", "body": "Be kind.\nNo advertising.\nHave fun."],
                    csrf: page.csrf)
                #expect(same.status == 303)
                #expect(
                    try await env.auditCount("content_policies.publish") == publishes + 1,
                    "the same text publishes nothing")
                let blank = try await manager.post(
                    "/console/policies/terms", ["title": "", "body": ""], csrf: page.csrf)
                #expect(blank.status == 422)

                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let read = try await auditor.get("/console/policies/terms?from=1&to=2")
                #expect(read.status == 200 && !read.text.contains("Publish a new version"))
                let partner = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[0].admin.operatorID)
                #expect(try await partner.get("/console/policies").status == 403)
            }
        }
    }
}
