import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Webhook endpoints: registered by a partner admin, their secret shown once and stored nowhere, tenant-isolated")
struct WebhookEndpointsTests {
    static let draft = #"{"url":"https://hooks.shop.example/orders","events":["order.placed","order.paid"]}"#

    @Test(
        """
        a partner admin registers one (201, whsec_ secret, one audit event without it); staff list it without a \
        secret; the other partner does not see it; a replay of the key answers without the secret; staff and the \
        app are refused; the secret is in no table
        """)
    func registeredAuditedAndIsolated() async throws {
        try await TestEnvironment.with { env in
            let (own, other) = (env.fixture.partners[0], env.fixture.partners[1])
            let key = ["Idempotency-Key": UUID().uuidString]
            let (id, secret) = try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/webhook-endpoints", token: own.adminToken, json: Self.draft, headers: key)
                #expect(created.status == 201, "\(created.text)")
                let endpoint = try #require(created.json["endpoint"] as? [String: Any])
                let id = try #require(endpoint["id"] as? String)
                let secret = try #require(created["secret"])
                #expect(secret.hasPrefix("whsec_") && secret.count > 40)
                #expect(endpoint["events"] as? [String] == ["order.placed", "order.paid"])
                let replay = try await client.call(
                    .post, "/v1/webhook-endpoints", token: own.adminToken, json: Self.draft, headers: key)
                #expect(replay.status == 201 && replay["secret"] == nil && replay["secret_already_delivered"] == "1")
                let listed = try await client.call(.get, "/v1/webhook-endpoints", token: own.staffToken)
                #expect(listed.status == 200 && listed.text.contains(id) && !listed.text.contains("whsec_"))
                let elsewhere = try await client.call(.get, "/v1/webhook-endpoints", token: other.adminToken)
                #expect(elsewhere.status == 200 && !elsewhere.text.contains(id))
                for token in [own.staffToken, env.fixture.tokens[.appService]!] {
                    let refused = try await client.call(.post, "/v1/webhook-endpoints", token: token, json: Self.draft)
                    #expect(refused.status == 403)
                }
                return (id, secret)
            }
            #expect(try await env.auditCount("webhook_endpoints.create") == 1)
            #expect(try await env.ownerScalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 1)
            let derived = WebhookEndpointSecrets(secondFactorKey: TestEnvironment.secondFactorKey)
            #expect(derived.secret(for: try #require(UUID(uuidString: id)), generation: 1) == secret)
            for table in ["audit_events", "idempotency_keys", "webhook_endpoints"] {
                let holding = try await env.ownerScalar(
                    "SELECT count(*) FROM \(table) t WHERE t::text LIKE '%\(secret.dropFirst(6).prefix(20))%'",
                    as: Int.self)
                #expect(holding == 0, "\(table) holds the secret")
            }
        }
    }

    @Test(
        """
        a URL that reaches the service's own network is refused (422 on url, nothing written): loopback, private, \
        link-local and metadata addresses, IPv4 and IPv6, names and literals, mapped and tunnelled forms, one bad \
        answer among good ones, http, credentials, Unicode look-alikes and names that do not resolve
        """)
    func ssrfRefused() async throws {
        let refused = [
            "https://loopback.example/h", "https://loopback-v6.example/h", "https://private.example/h",
            "https://private-172.example/h", "https://home.example/h", "https://link-local.example/h",
            "https://metadata.example/latest/meta-data", "https://metadata-v6.example/h", "https://ula.example/h",
            "https://mapped.example/h", "https://mapped-private.example/h", "https://nat64-private.example/h",
            "https://sixtofour-loopback.example/h", "https://link-local-v6.example/h", "https://unspecified.example/h",
            "https://cgnat.example/h", "https://mixed.example/h", "https://127.0.0.1/h", "https://[::1]/h",
            "https://169.254.169.254/latest", "https://[::ffff:169.254.169.254]/", "https://[fe80::1]/",
            "https://10.0.0.1:8443/h", "https://0.0.0.0/", "http://hooks.shop.example/h",
            "https://user:pass@hooks.shop.example/h", "https://ｌｏｏｐｂａｃｋ.example/h",
            "https://2130706433/h",
            "https://127.0.0.1.nip.io/h", "ftp://hooks.shop.example/h", "hooks.shop.example/h",
        ]
        try await TestEnvironment.with { env in
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                for url in refused {
                    let body = #"{"url":"\#(url)","events":["order.placed"]}"#
                    let reply = try await client.call(.post, "/v1/webhook-endpoints", token: admin, json: body)
                    #expect(
                        reply.status == 422 && reply.text.contains("\"url\""), "\(url): \(reply.status) \(reply.text)")
                }
                let v6 = #"{"url":"https://hooks-v6.shop.example/h","events":["good.low_stock"]}"#
                #expect(try await client.call(.post, "/v1/webhook-endpoints", token: admin, json: v6).status == 201)
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 1)
            #expect(try await env.auditCount("webhook_endpoints.create") == 1)
        }
    }

    @Test("under dev's rules a receiver on loopback is accepted (http too), a private address still is not")
    func devAllowsLoopback() async throws {
        let outbound = {
            var settings = TestEnvironment.outbound
            settings.rules = .dev
            return settings
        }()
        try await TestEnvironment.with { env in
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp(outbound: outbound) { client in
                for (url, status) in [
                    ("http://127.0.0.1:9999/hooks", 201), ("http://loopback.example:8080/h", 201),
                    ("https://private.example/h", 422), ("http://metadata.example/h", 422),
                ] {
                    let body = #"{"url":"\#(url)","events":["order.placed"]}"#
                    let reply = try await client.call(.post, "/v1/webhook-endpoints", token: admin, json: body)
                    #expect(reply.status == status, "\(url): \(reply.text)")
                }
            }
        }
    }
}
