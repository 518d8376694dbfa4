import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Webhook secrets: rolled with an overlap, each roll once under 30 at once; the console shows a new secret once")
struct WebhookSecretRollTests {
    /// A registered endpoint's id and first secret.
    static func register(_ client: any TestClientProtocol, _ token: String) async throws -> (UUID, String) {
        let created = try await client.call(
            .post, "/v1/webhook-endpoints", token: token, json: WebhookEndpointsTests.draft)
        let endpoint = try #require(created.json["endpoint"] as? [String: Any])
        let id = try #require(endpoint["id"] as? String)
        return (try #require(UUID(uuidString: id)), try #require(created["secret"]))
    }

    @Test(
        """
        a roll answers a new secret; the previous one signs beside it until the overlap ends (both sign, then only \
        the new); overlap 0 stops it at once; 73 hours is 422; another partner's admin gets 404 and changes nothing
        """)
    func rolledWithOverlap() async throws {
        try await TestEnvironment.with { env in
            let (own, other) = (env.fixture.partners[0], env.fixture.partners[1])
            try await env.withApp { client in
                let (id, first) = try await Self.register(client, own.adminToken)
                let path = "/v1/webhook-endpoints/\(id.text)/secret-rolls"
                let rolled = try await client.call(.post, path, token: own.adminToken, json: #"{"overlap_hours":24}"#)
                #expect(rolled.status == 200, "\(rolled.text)")
                let second = try #require(rolled["secret"])
                #expect(second != first && second.hasPrefix("whsec_"))
                let endpoint = try await env.database.read(
                    ListWebhookEndpoints(after: nil, limit: 10), context: env.context(.platformAdmin)
                ).first { $0.id == id }
                let secrets = WebhookEndpointSecrets(secondFactorKey: TestEnvironment.secondFactorKey)
                let stored = try #require(endpoint)
                #expect(stored.secretGeneration == 2)
                #expect(secrets.signing(stored, at: env.clock.now()) == [second, first])
                #expect(secrets.signing(stored, at: env.clock.now().addingTimeInterval(25 * 3600)) == [second])
                let sharp = try await client.call(.post, path, token: own.adminToken, json: #"{"overlap_hours":0}"#)
                #expect(sharp.status == 200 && sharp.json["endpoint"].map { "\($0)" }?.contains("previous") == false)
                let tooLong = try await client.call(.post, path, token: own.adminToken, json: #"{"overlap_hours":73}"#)
                #expect(tooLong.status == 422 || tooLong.status == 400, "\(tooLong.text)")
                let foreign = try await client.call(.post, path, token: other.adminToken, json: "{}")
                #expect(foreign.status == 404)
            }
            #expect(try await env.auditCount("webhook_endpoints.roll_secret") == 2)
        }
    }

    @Test("30 rolls of one endpoint at once: each takes effect once (generation 31, 30 audit events)")
    func concurrentRolls() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                let (id, _) = try await Self.register(client, admin)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await client.call(
                                .post, "/v1/webhook-endpoints/\(id.text)/secret-rolls", token: admin, json: "{}"
                            ).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            }
            #expect(
                try await env.ownerScalar("SELECT max(secret_generation) FROM webhook_endpoints", as: Int.self) == 31)
            #expect(try await env.auditCount("webhook_endpoints.roll_secret") == 30)
        }
    }

    @Test(
        "the console registers an endpoint and shows its secret on that answer only; a private URL is refused in place")
    func consoleShowsSecretOnce() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let page = try await admin.get("/console/webhook-endpoints")
                #expect(page.status == 200)
                let fields = ["url": "https://hooks.shop.example/console", "event_order.placed": "yes"]
                let created = try await admin.post("/console/webhook-endpoints", fields, csrf: page.csrf)
                #expect(created.status == 200 && created.text.contains("whsec_"), "\(created.status)")
                #expect(try await env.auditCount("webhook_endpoints.create") == 1)
                let again = try await admin.get("/console/webhook-endpoints")
                #expect(again.text.contains("hooks.shop.example/console") && !again.text.contains("whsec_"))
                let inside = ["url": "https://private.example/h", "event_order.placed": "yes"]
                let refused = try await admin.post("/console/webhook-endpoints", inside, csrf: page.csrf)
                #expect(refused.status == 422 && refused.text.contains("private"))
                let none = try await admin.post(
                    "/console/webhook-endpoints", ["url": "https://hooks.shop.example/x"], csrf: page.csrf)
                #expect(none.status == 422)
                #expect(try await env.auditCount("webhook_endpoints.create") == 1)
            }
        }
    }
}
