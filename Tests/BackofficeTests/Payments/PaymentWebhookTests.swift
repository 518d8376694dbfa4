import BackofficeAPI
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Payments: signed webhooks, one completion per payment, reconciliation")
struct PaymentWebhookTests {
    func event(_ id: String, _ type: String, _ payment: String) -> String {
        #"""
        {"id": "\#(id)", "type": "\#(type)", "created": 1767225600, "data": {"payment_id": "\#(payment)",\#
         "failure_code": "card_declined"}}
        """#
    }

    func signed(_ body: String, at time: Date, secrets: [String] = [TestEnvironment.webhookSecret]) -> [String: String]
    {
        ["Webhook-Signature": WebhookSignature.header(body: Array(body.utf8), secrets: secrets, at: time)]
    }

    @Test(
        """
        a wrong signature or a 10-minute-old timestamp is 400 and changes nothing; a valid event applies once, \
        also delivered twice
        """
    )
    func webhooksAreVerifiedAndDeduplicated() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("BOTTLE", 1, "usd")], card: SimulatedPaymentGateway.pendingCard),
                    headers: .newIdempotencyKey)
                #expect(placed["status"] == "pending_payment", "\(placed.text)")
                let id = try #require(placed["id"])
                let paymentID = try #require(
                    try await env.ownerScalar(
                        "SELECT provider_payment_id FROM payments WHERE order_id = '\(id)'", as: String.self))
                let body = event("evt_1", "payment.succeeded", paymentID)
                let now = env.clock.now()
                let audit = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let before = try await audit()
                let rows = {
                    try await env.ownerScalar(
                        """
                        SELECT o.status || ' v' || o.version || ', payment ' || p.status || ' ' || \
                        p.authorized_cents FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.id = '\(id)'
                        """,
                        as: String.self)
                }
                let rowsBefore = try await rows()
                for (what, headers) in [
                    ("no signature", [:]),
                    ("a wrong secret", signed(body, at: now, secrets: ["whsec_someone_else_entirely"])),
                    ("a stale timestamp", signed(body, at: now.addingTimeInterval(-600))),
                    ("an altered body", signed(body.replacingOccurrences(of: "evt_1", with: "evt_X"), at: now)),
                ] {
                    let reply = try await client.call(
                        .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: headers)
                    #expect(reply.status == 400, "\(what): \(reply.status) \(reply.text)")
                    #expect(reply["code"] == "invalid_signature", "\(what)")
                }
                #expect(try await audit() == before)
                #expect(try await env.ownerScalar("SELECT count(*) FROM payment_webhook_events", as: Int.self) == 0)
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: app)["status"] == "pending_payment")
                #expect(try await rows() == rowsBefore, "the order's status and version and its payment are unchanged")

                // A rotation: two signatures, one under the current secret.
                let rotation = signed(
                    body, at: now, secrets: ["whsec_retired_secret_00000", TestEnvironment.webhookSecret])
                let applied = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: rotation)
                #expect(applied.status == 200, "\(applied.text)")
                #expect(applied["outcome"] == "completed")
                let duplicate = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: signed(body, at: now))
                #expect(duplicate.json["duplicate"] as? Bool == true)
                let second = event("evt_2", "payment.succeeded", paymentID)
                let racing = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: second, headers: signed(second, at: now)
                )
                #expect(
                    racing["outcome"] == "already_applied", "a second completion of the same payment changes nothing")
                let order = try await client.call(.get, "/v1/orders/\(id)", token: app)
                #expect(order["status"] == "paid")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE action = 'orders.checkout' OR action = \
                        'payments.webhook'
                        """,
                        as: Int.self) == 4,
                    "the reservation, the provider's pending verdict, the webhook's completion")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE target_id = '\(id)' AND action = 'payments.webhook'",
                        as: Int.self) == 2)
                #expect(
                    try await env.ownerScalar(
                        "SELECT authorized_cents FROM payments WHERE order_id = '\(id)'", as: Int64.self) == 2_500)
            }
        }
    }

    @Test(
        """
        a partial refund at the provider is recorded on the payment and leaves the order; the refund of the rest \
        refunds it and returns its FitPoints
        """
    )
    func partialRefunds() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let placed = try await client.call(
                    .post, "/v1/checkout", token: app,
                    json: shop.checkoutJSON([("BOTTLE", 1, "usd"), ("BAND", 1, "fitpoints")]),
                    headers: .newIdempotencyKey)
                let id = try #require(placed["id"])
                #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: admin).status == 200)
                #expect(
                    try await client.call(
                        .post, "/v1/orders/\(id)/ship", token: admin,
                        json: #"{"carrier":"UPS","tracking_number":"1Z1"}"#
                    ).status == 200)
                #expect(try await shop.balance() == 4_200)
                let paymentID = try #require(
                    try await env.ownerScalar(
                        "SELECT provider_payment_id FROM payments WHERE order_id = '\(id)'", as: String.self))
                func refund(_ eventID: String, amount: Int?) async throws -> Reply {
                    let data = #""payment_id": "\#(paymentID)""# + (amount.map { #", "amount_cents": \#($0)"# } ?? "")
                    let body = #"{"id": "\#(eventID)", "type": "refund.succeeded", "data": {\#(data)}}"#
                    return try await client.call(
                        .post, "/v1/payments/webhooks/simulated", token: nil, json: body,
                        headers: signed(body, at: env.clock.now()))
                }
                let partial = try await refund("evt_r1", amount: 1_000)
                #expect(partial["outcome"] == "partially_refunded", "\(partial.text)")
                let payment = {
                    try await env.ownerScalar(
                        "SELECT status || ' ' || refunded_cents FROM payments WHERE order_id = '\(id)'", as: String.self
                    )
                }
                #expect(try await payment() == "captured 1000")
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: app)["status"] == "shipped")
                #expect(try await shop.balance() == 4_200, "no FitPoints back for part of the dollars")
                let rest = try await refund("evt_r2", amount: nil)
                #expect(rest["outcome"] == "refunded")
                #expect(try await payment() == "refunded 2500")
                #expect(try await client.call(.get, "/v1/orders/\(id)", token: app)["status"] == "refunded")
                #expect(try await shop.balance() == 5_000, "the whole refund returns the order's FitPoints")
                #expect(
                    try await refund("evt_r3", amount: 500)["outcome"] == "already_applied",
                    "never more than was captured")
                #expect(try await payment() == "refunded 2500")
            }
        }
    }

    @Test(
        """
        a failed payment cancels its order (stock back); a payment whose webhook never came is completed by \
        reconciliation
        """
    )
    func failedPaymentsAndReconciliation() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                var orders: [String] = []
                for _ in 0..<2 {
                    let placed = try await client.call(
                        .post, "/v1/checkout", token: app,
                        json: shop.checkoutJSON([("MAT", 2, "usd")], card: SimulatedPaymentGateway.pendingCard),
                        headers: .newIdempotencyKey)
                    orders.append(try #require(placed["id"]))
                }
                #expect(try await shop.stock("MAT") == 1)
                let failing = try #require(
                    try await env.ownerScalar(
                        "SELECT provider_payment_id FROM payments WHERE order_id = '\(orders[0])'", as: String.self))
                let body = event("evt_fail", "payment.failed", failing)
                let reply = try await client.call(
                    .post, "/v1/payments/webhooks/simulated", token: nil, json: body,
                    headers: signed(body, at: env.clock.now()))
                #expect(reply["outcome"] == "payment_failed", "\(reply.text)")
                #expect(
                    try await client.call(.get, "/v1/orders/\(orders[0])", token: app)["status"] == "payment_failed")
                #expect(try await shop.stock("MAT") == 3)

                env.clock.advance(by: 15 * 60)
                let report = try await client.call(.post, "/v1/payments/reconciliations", token: manager, json: "{}")
                #expect(report.status == 200, "\(report.text)")
                #expect(report.json["completed"] as? [String] == [orders[1]])
                #expect(try await client.call(.get, "/v1/orders/\(orders[1])", token: app)["status"] == "paid")
                let again = try await client.call(.post, "/v1/payments/reconciliations", token: manager, json: "{}")
                #expect(again.json["checked"] as? Int == 0, "nothing is pending any more")
                #expect(
                    try await client.call(
                        .post, "/v1/payments/reconciliations", token: shop.partner.adminToken, json: "{}"
                    ).status == 403)
            }
        }
    }

    @Test(
        """
        a forged webhook is refused before any database work (400 while the pool's only connection is busy), \
        counted in /metrics
        """
    )
    func forgeriesNeverLease() async throws {
        try await TestEnvironment.with { env in
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(1)
            try await Database.with(
                url: env.appURL, logger: testLogger, clock: env.clock, maximumConnections: 1, limits: limits
            ) { database in
                try await env.withApp(database: database) { client in
                    let (held, holding) = AsyncStream<Void>.makeStream()
                    let (released, release) = AsyncStream<Void>.makeStream()
                    // The pool's one connection opened first (it may take longer than the lease timeout on a busy
                    // machine).
                    var warm = false
                    for _ in 0..<10 where !warm {
                        warm =
                            (try? await database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 })
                            == 1
                    }
                    #expect(warm)
                    let holder = Task {
                        defer { holding.finish() }  // the wait below ends even if the hold never began
                        try await database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in
                            holding.yield()
                            for await _ in released { break }
                        }
                    }
                    var holds = held.makeAsyncIterator()
                    try #require(await holds.next() != nil, "another transaction holds the pool's only connection")
                    let body = event("evt_forged", "payment.succeeded", "pi_whatever")
                    for headers in [signed(body, at: env.clock.now(), secrets: ["whsec_forger_0000000000"]), [:]] {
                        let forged = try await client.call(
                            .post, "/v1/payments/webhooks/simulated", token: nil, json: body, headers: headers)
                        #expect(forged.status == 400, "refused without waiting for a connection: \(forged.text)")
                        #expect(forged["code"] == "invalid_signature")
                    }
                    release.yield()
                    try await holder.value
                    let metrics = try await client.call(.get, "/metrics", token: nil)
                    #expect(metrics.text.contains("backoffice_webhook_signature_failures_total"))
                }
            }
        }
    }
}
