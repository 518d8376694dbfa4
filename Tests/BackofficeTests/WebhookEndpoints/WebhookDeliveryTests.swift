import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// A webhook receiver for a test (`ops/webhook-receiver.py`, run by `TestPython`): it checks each
/// delivery's signature with Stripe's own verifier and answers the statuses it is given in turn.
final class WebhookReceiver: Sendable {
    let port: Int
    let pid: pid_t
    let log: String

    struct Request: Decodable, Equatable {
        let id: String
        let type: String
        let headerID: String
        let status: Int
        let verified: Bool
        enum CodingKeys: String, CodingKey { case id, type, headerID = "header_id", status, verified }
    }

    /// A receiver answering `answers` in turn, signed by any of `secrets`; `options` are more of
    /// the script's options (`--answer-bytes 5000`).
    init(secrets: [String], answers: [Int], options: [String] = []) throws {
        let python = try TestPython.path.get()
        log = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString).log").path
        pid = try ChildProcess.spawn(
            [
                python, projectRoot.appendingPathComponent("ops/webhook-receiver.py").path, "--answers",
                answers.map(String.init).joined(separator: ","),
            ] + secrets.flatMap { ["--secret", $0] } + options,
            outputPath: log)
        if let port = readyPort(in: log) {
            self.port = port
            return
        }
        kill(pid, SIGKILL)
        throw TestSetupError(
            description: "the receiver did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    /// The requests received so far, in order.
    func requests() throws -> [Request] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("{") }
            .map { try JSONDecoder().decode(Request.self, from: Data($0.utf8)) }
    }

    deinit { kill(pid, SIGKILL) }
}

@Suite(
    "Webhook deliveries: written with the change, posted in order, signed for Stripe's verifier, retried, given up"
)
struct WebhookDeliveryTests {
    static let secrets = WebhookEndpointSecrets(secondFactorKey: TestEnvironment.secondFactorKey)

    /// Delivery through dev's rules (loopback allowed), with the tests' resolver.
    static func delivery(_ env: TestEnvironment, rules: OutboundTarget.Rules = .dev) -> WebhookSender {
        var settings = WebhookSettings()
        settings.outbound = TestEnvironment.outbound
        settings.outbound.rules = rules
        return WebhookSender(database: env.database, policies: env.policies, settings: settings, secrets: secrets)
    }

    /// An endpoint of `partner` at `url` for `events`, registered as its admin under dev's rules.
    static func endpoint(_ env: TestEnvironment, partner: Int, url: String, _ events: [WebhookEvent]) async throws
        -> WebhookEndpoint
    {
        let target = try await OutboundTarget.check(url, rules: .dev, resolver: TestEnvironment.outbound.resolver)
        let admin = OperationContext(
            principal: env.fixture.partners[partner].admin, requestID: "test", sourceIP: nil, policies: env.policies)
        return try await env.database.run(
            CreateWebhookEndpoint(target: target, events: events, description: nil), context: admin)
    }

    static func placeOrder(_ shop: ShopFixture, _ quantity: Int) async throws -> UUID {
        try await shop.env.database.runStaged(
            Checkout(
                shop.request([("BOTTLE", quantity, .usd)]), payments: SimulatedPaymentGateway(), idempotencyKey: nil),
            context: shop.env.context(.appService)
        ).detail.order.id
    }

    static func deliveries(_ env: TestEnvironment, _ endpoint: WebhookEndpoint) async throws -> String {
        try await env.ownerScalar(
            """
            SELECT coalesce(string_agg(v.type || ' ' || d.status || ' ' || d.attempts, ',' ORDER BY d.seq), '')
            FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id
            WHERE d.endpoint_id = '\(endpoint.id.text)'
            """, as: String.self) ?? ""
    }

    @Test(
        """
        the change writes its events in its own transaction, one delivery per endpoint of the shop that asked for \
        the type: an order placed and paid, a good falling to its low-stock line; another shop's endpoint gets none
        """)
    func eventsWithTheChange() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let orders = try await Self.endpoint(
                env, partner: 0, url: "http://127.0.0.1:9/o", [.orderPlaced, .orderPaid])
            let stock = try await Self.endpoint(env, partner: 0, url: "http://127.0.0.1:9/s", [.goodLowStock])
            let other = try await Self.endpoint(env, partner: 1, url: "http://127.0.0.1:9/x", [.orderPlaced])
            _ = try await Self.placeOrder(shop, 2)
            #expect(try await Self.deliveries(env, orders) == "order.placed pending 0,order.paid pending 0")
            #expect(try await Self.deliveries(env, stock) == "", "stock 8: above the line")
            _ = try await Self.placeOrder(shop, 3)
            #expect(try await Self.deliveries(env, stock) == "good.low_stock pending 0", "stock 5: at the line")
            #expect(try await Self.deliveries(env, other) == "")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM webhook_events WHERE tenant_id = '\(env.fixture.partners[1].tenantID.text)'",
                    as: Int.self) == 0)
        }
    }

    @Test(
        """
        deliveries are posted in order per endpoint with the event's id, signed so that Stripe's verifier accepts \
        them under the endpoint's secret; a 500 is retried after its wait and nothing after it goes first
        """)
    func postedInOrderSignedRetried() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let receiver = try WebhookReceiver(secrets: [], answers: [500, 200])
            let endpoint = try await Self.endpoint(
                env, partner: 0, url: "http://127.0.0.1:\(receiver.port)/hooks", [.orderPlaced, .orderPaid])
            let signed = try WebhookReceiver(
                secrets: [Self.secrets.secret(for: endpoint.id, generation: 1)], answers: [500, 200])
            try await env.asOwner(
                """
                UPDATE webhook_endpoints SET url = 'http://127.0.0.1:\(signed.port)/hooks'
                WHERE id = '\(endpoint.id.text)'
                """
            )
            _ = try await Self.placeOrder(shop, 1)
            let delivery = Self.delivery(env)
            #expect(try await delivery.deliverDue() == 1, "the first is tried; the second waits behind it")
            #expect(try signed.requests().map(\.status) == [500])
            #expect(try await delivery.deliverDue() == 0, "not due again yet")
            env.clock.advance(by: 61)
            #expect(try await delivery.deliverDue() == 2)
            let requests = try signed.requests()
            #expect(requests.map(\.type) == ["order.placed", "order.placed", "order.paid"])
            #expect(requests.allSatisfy { $0.verified && $0.id == $0.headerID }, "\(requests)")
            #expect(requests[0].id == requests[1].id, "a retry carries the same event id")
            #expect(try await Self.deliveries(env, endpoint) == "order.placed delivered 2,order.paid delivered 1")
            #expect(try receiver.requests().isEmpty)
        }
    }

    @Test(
        """
        under serve's rules a delivery to an address that is not public is refused at the attempt, no request \
        made; a delivery failing for three days fails, its endpoint is disabled (audited) and the admins who want \
        it are mailed
        """)
    func refusedThenGivenUp() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let quiet = try await env.database.runAsSystem(
                CreateOperator(email: "quiet@alpha-shop.example", role: .partnerAdmin, tenantID: shop.partner.tenantID),
                context: OperationContext.system("test", policies: env.policies))
            _ = try await env.database.run(
                SetMailPreferences(choices: [(topic: "webhook_endpoint_disabled", subscribed: false)]),
                context: OperationContext(
                    principal: Principal(
                        operatorID: quiet.id, role: .partnerAdmin, tenantID: quiet.tenantID, tokenID: nil),
                    requestID: "t", sourceIP: nil, policies: env.policies))
            let receiver = try WebhookReceiver(secrets: [], answers: [200])
            let endpoint = try await Self.endpoint(
                env, partner: 0, url: "http://loopback.example:\(receiver.port)/h", [.orderPlaced])
            _ = try await Self.placeOrder(shop, 1)
            let delivery = Self.delivery(env, rules: .serve)
            #expect(try await delivery.deliverDue() == 1)
            #expect(try receiver.requests().isEmpty, "no request to a loopback address")
            let error = try await env.ownerScalar(
                "SELECT last_error FROM webhook_deliveries WHERE endpoint_id = '\(endpoint.id.text)'", as: String.self)
            #expect(error?.hasPrefix("refused:") == true, "\(error ?? "")")
            env.clock.advance(by: 3 * 86_400 + 1)
            #expect(try await delivery.deliverDue() == 1)
            #expect(try await Self.deliveries(env, endpoint) == "order.placed failed 2")
            #expect(
                try await env.ownerScalar(
                    "SELECT status FROM webhook_endpoints WHERE id = '\(endpoint.id.text)'", as: String.self)
                    == "disabled")
            #expect(try await env.auditCount("webhook_endpoints.update") == 1)
            #expect(
                try await env.ownerScalar(
                    "SELECT string_agg(recipient, ',') FROM outbox WHERE kind = 'webhook_endpoint_disabled'",
                    as: String.self) == "admin@alpha-shop.example",
                "the shop's admins, but not one who turned this mail off, nor its staff")
            env.clock.advance(by: 86_400)
            #expect(try await delivery.deliverDue() == 0, "a disabled endpoint is sent nothing")
        }
    }

    @Test(
        """
        30 senders at once over two shops' endpoints: every event is posted exactly once, each endpoint's in the \
        order its events were written (the claim's head-of-line rule under SKIP LOCKED)
        """)
    func thirtySendersAtOnce() async throws {
        try await TestEnvironment.with { env in
            let receivers = try (0..<2).map { _ in try WebhookReceiver(secrets: [], answers: [200]) }
            var endpoints: [WebhookEndpoint] = []
            for partner in 0..<2 {
                let shop = try await ShopFixture.make(env, partner: partner)
                endpoints.append(
                    try await Self.endpoint(
                        env, partner: partner, url: "http://127.0.0.1:\(receivers[partner].port)/h",
                        [.orderPlaced, .orderPaid]))
                for _ in 0..<8 { _ = try await Self.placeOrder(shop, 1) }
            }
            let sender = Self.delivery(env)
            let pending = { @Sendable in
                try await env.ownerScalar(
                    "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'", as: Int.self) ?? 0
            }
            // An attempt that failed on a loaded machine (the receiver never reached) waits for its retry
            // on the test's clock, which nobody advances: it is made due again at once, as time would. A
            // claim is never touched, so nothing is posted twice unless the sender posts it twice.
            let now = RFC3339DateTranscoder.format(env.clock.now())
            let retryFailed = { @Sendable in
                try await env.ownerScalar(
                    """
                    WITH due AS (
                        UPDATE webhook_deliveries SET due_at = '\(now)'
                        WHERE status = 'pending' AND claimed_until IS NULL AND last_error IS NOT NULL
                            AND due_at > '\(now)' RETURNING 1)
                    SELECT count(*) FROM due
                    """, as: Int.self) ?? 0
            }
            // bounded by time, not by rounds: on a busy machine a round can take longer
            let deadline = ContinuousClock.now + .seconds(90)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<30 {
                    group.addTask {
                        while ContinuousClock.now < deadline, try await pending() > 0 {
                            if try await sender.deliverDue(limit: 3) == 0 {
                                _ = try await retryFailed()
                                try await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stuck = try await env.ownerScalar(
                """
                SELECT coalesce(string_agg(attempts || ' ' || coalesce(last_error, '-') || ' claimed ' ||
                    coalesce(claimed_until::text, '-') || ' due ' || due_at::text, '; '), '')
                FROM webhook_deliveries WHERE status = 'pending'
                """, as: String.self)
            #expect(try await pending() == 0, "\(stuck ?? "")")
            for (endpoint, receiver) in zip(endpoints, receivers) {
                let written = try await env.ownerScalar(
                    """
                    SELECT string_agg(event_id::text, ',' ORDER BY seq) FROM webhook_deliveries
                    WHERE endpoint_id = '\(endpoint.id.text)'
                    """, as: String.self)
                let posted = try receiver.requests().map(\.id).joined(separator: ",")
                #expect(posted == written, "each event once, in the order written")
                #expect(try receiver.requests().count == 16)
            }
        }
    }
}
