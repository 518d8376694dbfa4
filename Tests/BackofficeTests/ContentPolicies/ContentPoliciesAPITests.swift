import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Content policies")
struct ContentPoliciesAPITests {
    @Test(
        """
        publishing makes versions; an identical text publishes nothing; the app reads the current version and the \
        history
        """
    )
    func versions() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let first = try await client.call(
                    .post, "/v1/content-policies", token: manager,
                    json: #"{"slug":"privacy","title":"Privacy","body":"Do not share others' data."}"#)
                #expect(first.status == 201)
                #expect(first["version"] == "1")
                let same = try await client.call(
                    .post, "/v1/content-policies", token: manager,
                    json: #"{"slug":"privacy","title":"Privacy","body":"Do not share others' data."}"#)
                #expect(same.status == 200)
                #expect(same["version"] == "1")
                let second = try await client.call(
                    .post, "/v1/content-policies", token: manager,
                    json: #"{"slug":"privacy","title":"Privacy","body":"Do not share others' data or pictures."}"#)
                #expect(second["version"] == "2")

                let current = try await client.call(.get, "/v1/content-policies/privacy", token: app)
                #expect(current["version"] == "2")
                #expect(current["body"] == "Do not share others' data or pictures.")
                let history = try await client.call(.get, "/v1/content-policies/privacy/history", token: app)
                #expect(try history.decode(Components.Schemas.ContentPolicyList.self).items.map(\.version) == [2, 1])
                let all = try await client.call(.get, "/v1/content-policies", token: app)
                #expect(try all.decode(Components.Schemas.ContentPolicyList.self).items.map(\.slug) == ["privacy"])

                #expect(try await client.call(.get, "/v1/content-policies/nothing-here", token: app).status == 404)
                let badSlug = try await client.call(
                    .post, "/v1/content-policies", token: manager, json: #"{"slug":"Bad Slug","title":"x","body":"y"}"#)
                #expect(badSlug.status == 422)
                #expect(badSlug.text.contains("slug"))
                #expect(
                    try await client.call(
                        .post, "/v1/content-policies", token: app, json: #"{"slug":"spam","title":"x","body":"y"}"#
                    ).status == 403)
            }
            let published = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE action = 'content_policies.publish' AND target_id = 'privacy'",
                as: Int.self)
            #expect(published == 2, "one event per version, none for the identical text")
        }
    }

    @Test("the repository's content policy parses and names the topics it must cover")
    func shippedPolicy() throws {
        let text = try String(
            contentsOf: projectRoot.appendingPathComponent("policies/content/community-guidelines.md"), encoding: .utf8)
        let document = try FrontMatterDocument(text: text)
        #expect(document.text("slug") == "community-guidelines")
        let body = try #require(document.body).lowercased()
        for topic in [
            "harassment", "hate", "spam", "illegal or unsafe goods", "health misinformation", "impersonation",
            "privacy",
        ] {
            #expect(body.contains(topic), "\(topic)")
        }
        #expect(throws: MalformedDocument.self) { try FrontMatterDocument(text: "---\ntitle: [oops\n---\nx") }
    }
}
