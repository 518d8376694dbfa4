import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Webhook deliveries as a shop reads them: listed with every attempt, replayed, never another shop's")
struct WebhookDeliveryHistoryTests {
    typealias Deliveries = WebhookDeliveryTests

    /// A shop whose endpoint (at a receiver answering `answers`) was sent an order's placed and
    /// paid events, once each plus what `answers` made it retry after a minute.
    static func delivered(
        _ env: TestEnvironment, answers: [Int], options: [String] = []
    ) async throws -> (WebhookEndpoint, WebhookReceiver) {
        let shop = try await ShopFixture.make(env)
        let receiver = try WebhookReceiver(secrets: [], answers: answers, options: options)
        let endpoint = try await Deliveries.endpoint(
            env, partner: 0, url: "http://127.0.0.1:\(receiver.port)/h", [.orderPlaced, .orderPaid])
        _ = try await Deliveries.placeOrder(shop, 1)
        let sender = Deliveries.delivery(env)
        try await sender.deliverDue()
        env.clock.advance(by: 61)
        try await sender.deliverDue()
        return (endpoint, receiver)
    }

    @Test(
        """
        an endpoint's deliveries are listed newest first, filtered by status, each with its attempts and last \
        answer; one delivery shows every attempt (a 5,000-byte answer kept to 1,000 characters, its NUL dropped) \
        and the body it posts; another shop's endpoint and delivery are 404
        """)
    func listedWithAttempts() async throws {
        try await TestEnvironment.with { env in
            let (endpoint, receiver) = try await Self.delivered(
                env, answers: [500, 200], options: ["--answer-bytes", "5000"])
            #expect(try receiver.requests().map(\.status) == [500, 200, 200])
            let (admin, other) = (env.fixture.partners[0].adminToken, env.fixture.partners[1].adminToken)
            try await env.withApp { client in
                let path = "/v1/webhook-endpoints/\(endpoint.id.text)/deliveries"
                let page = try await client.call(.get, path, token: admin)
                let items = try page.decode(Components.Schemas.WebhookDeliveryPage.self).items
                #expect(items.map(\.eventType.rawValue) == ["order.paid", "order.placed"], "\(page.text)")
                #expect(items.map(\.attempts) == [1, 2] && items.allSatisfy { $0.status == .delivered })
                #expect(items.allSatisfy { $0.lastStatus == 200 && $0.nextAttemptAt == nil })
                let firstPage = try await client.call(.get, path + "?limit=1", token: admin)
                let cursor = try #require(firstPage.decode(Components.Schemas.WebhookDeliveryPage.self).nextCursor)
                let second = try await client.call(.get, path + "?limit=1&cursor=\(cursor)", token: admin)
                #expect(try second.decode(Components.Schemas.WebhookDeliveryPage.self).items.map(\.id) == [items[1].id])
                let pending = try await client.call(.get, path + "?status=pending", token: admin)
                #expect(try pending.decode(Components.Schemas.WebhookDeliveryPage.self).items.isEmpty)

                let shown = try await client.call(.get, "/v1/webhook-deliveries/\(items[1].id)", token: admin)
                let detail = try shown.decode(Components.Schemas.WebhookDeliveryDetail.self)
                #expect(detail.attempts.map(\.number) == [1, 2] && detail.attempts.map(\.status) == [500, 200])
                #expect(detail.attempts.allSatisfy { $0.response == String(repeating: "x", count: 1_000) })
                #expect(detail.attempts.allSatisfy { $0.durationMs >= 0 && $0.error == nil })
                let body = try JSONSerialization.jsonObject(with: Data(detail.body.utf8)) as? [String: Any]
                #expect(body?["id"] as? String == items[1].eventId && body?["type"] as? String == "order.placed")

                #expect(try await client.call(.get, path, token: other).status == 404)
                let foreign = "/v1/webhook-deliveries/\(items[1].id)"
                #expect(try await client.call(.get, foreign, token: other).status == 404)
                #expect(try await client.call(.post, foreign + "/replays", token: other).status == 404)
                #expect(try await client.call(.get, path + "?cursor=bm9wZQ", token: admin).status == 400)
            }
            #expect(try await env.auditCount("webhook_deliveries.replay") == 0)
        }
    }

    @Test(
        """
        a replay sends a delivered delivery again with the same event id, audited; 30 replays at once send it \
        once more, not 30 times; a disabled endpoint's delivery is 409 endpoint_disabled and nothing changes
        """)
    func replayed() async throws {
        try await TestEnvironment.with { env in
            let (endpoint, receiver) = try await Self.delivered(env, answers: [200])
            let admin = env.fixture.partners[0].adminToken
            let placed = try #require(
                try await env.ownerScalar(
                    """
                    SELECT d.id::text FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id
                    WHERE d.endpoint_id = '\(endpoint.id.text)' AND v.type = 'order.placed'
                    """, as: String.self))
            try await env.withApp { client in
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await client.call(.post, "/v1/webhook-deliveries/\(placed)/replays", token: admin)
                                .status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            }
            #expect(try await env.auditCount("webhook_deliveries.replay") == 30)
            #expect(try await Deliveries.delivery(env).deliverDue() == 1)
            let requests = try receiver.requests()
            #expect(requests.map(\.type) == ["order.placed", "order.paid", "order.placed"], "\(requests)")
            #expect(requests[0].id == requests[2].id, "a replay carries the same event id")
            #expect(try await Deliveries.deliveries(env, endpoint) == "order.placed delivered 2,order.paid delivered 1")

            try await env.asOwner("UPDATE webhook_endpoints SET status = 'disabled' WHERE id = '\(endpoint.id.text)'")
            try await env.withApp { client in
                let refused = try await client.call(.post, "/v1/webhook-deliveries/\(placed)/replays", token: admin)
                #expect(refused.status == 409 && refused["code"] == "endpoint_disabled", "\(refused.text)")
            }
            #expect(try await env.auditCount("webhook_deliveries.replay") == 30)
            #expect(try await Deliveries.deliveries(env, endpoint) == "order.placed delivered 2,order.paid delivered 1")
        }
    }

    @Test(
        """
        the console: the endpoints page links each endpoint's deliveries, tabbed by status; a delivery's page shows \
        its attempts and body; the admin replays it (audited), refused in place on a disabled endpoint; the staff \
        reads without the replay; another shop's delivery is a page not found
        """)
    func consolePages() async throws {
        try await TestEnvironment.with { env in
            let (endpoint, _) = try await Self.delivered(env, answers: [503, 200])
            let partner = env.fixture.partners[0]
            let delivery = try #require(
                try await env.ownerScalar(
                    "SELECT id::text FROM webhook_deliveries WHERE endpoint_id = '\(endpoint.id.text)' AND attempts>1",
                    as: String.self))
            let staffID = try #require(
                try await env.ownerScalar(
                    """
                    SELECT id FROM operators WHERE tenant_id = '\(partner.tenantID.text)' AND role = 'partner_staff'
                    LIMIT 1
                    """, as: UUID.self))
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: partner.admin.operatorID)
                let list = try await admin.get("/console/webhook-endpoints")
                #expect(list.text.contains("/console/webhook-endpoints/\(endpoint.id.text)"))
                let page = try await admin.get("/console/webhook-endpoints/\(endpoint.id.text)")
                #expect(page.status == 200 && page.text.contains("/console/webhook-deliveries/\(delivery)"))
                let failed = try await admin.get("/console/webhook-endpoints/\(endpoint.id.text)?status=failed")
                #expect(failed.status == 200 && failed.text.contains("No deliveries here yet."))
                let shown = try await admin.get("/console/webhook-deliveries/\(delivery)")
                #expect(shown.status == 200 && shown.text.contains("HTTP 503") && shown.text.contains("HTTP 200"))
                #expect(shown.text.contains("Replay") && shown.text.contains("order.placed"))
                let replayed = try await admin.post(
                    "/console/webhook-deliveries/\(delivery)/replay", [:], csrf: shown.csrf)
                #expect(replayed.status == 303, "\(replayed.status) \(replayed.text.prefix(300))")
                #expect(try await env.auditCount("webhook_deliveries.replay") == 1)
                try await env.asOwner(
                    "UPDATE webhook_endpoints SET status = 'disabled' WHERE id = '\(endpoint.id.text)'")
                let refused = try await admin.post(
                    "/console/webhook-deliveries/\(delivery)/replay", [:], csrf: shown.csrf)
                #expect(refused.status == 409 && refused.text.contains("enable it first"), "\(refused.status)")
                #expect(try await env.auditCount("webhook_deliveries.replay") == 1)

                let staff = try await ConsoleClient.signedIn(env, client, as: staffID)
                let read = try await staff.get("/console/webhook-deliveries/\(delivery)")
                #expect(read.status == 200 && !read.text.contains("Replay ("))
                let other = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[1].admin.operatorID)
                #expect(try await other.get("/console/webhook-deliveries/\(delivery)").status == 404)
                #expect(try await other.get("/console/webhook-endpoints/\(endpoint.id.text)").status == 404)
            }
        }
    }
}
