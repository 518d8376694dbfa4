import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A provider whose calls named in `holds` wait until the test lets them answer; the calls named
/// in `declines` are refused (`<call>_declined`), the others succeed.
final class HeldPaymentProvider: PaymentGateway {
    let provider = "simulated"
    let holds: Set<String>
    let declines: Set<String>
    let (entered, enteredSignal) = AsyncStream<String>.makeStream()
    let (released, releaseSignal) = AsyncStream<Void>.makeStream()

    init(holds: Set<String> = ["authorize"], declines: Set<String> = []) {
        (self.holds, self.declines) = (holds, declines)
    }

    /// The answer to `call` about `subject` (an order id, a payment id), held first if asked to.
    private func answer(_ call: String, _ subject: String, id: String) async -> PaymentOutcome {
        if holds.contains(call) {
            enteredSignal.yield(subject)
            for await _ in released { break }
        }
        return declines.contains(call) ? .declined(code: "\(call)_declined") : .succeeded(id: id)
    }

    func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome {
        await answer("authorize", request.reference, id: "pi_held_" + request.reference)
    }
    func charge(_ request: PaymentCharge) async throws -> PaymentOutcome {
        await answer("charge", request.reference, id: "pi_held_" + request.reference)
    }
    func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        await answer("capture", paymentID, id: paymentID)
    }
    func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        await answer("refund", paymentID, id: "re_" + paymentID)
    }
    func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome {
        await answer("void", paymentID, id: paymentID)
    }
    func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification { .verified("ba_held") }
    func status(of paymentID: String) async throws -> PaymentOutcome { .succeeded(id: paymentID) }
    func find(reference: String) async throws -> PaymentOutcome? { nil }
    /// Keeps no record of what it made.
    func charges(since: Date) async throws -> ProviderCharges { ProviderCharges([]) }
}

@Suite(
    "Checkout in two phases: no transaction waits on the payment provider; what a crash leaves, reconciliation settles")
struct TwoPhaseCheckoutTests {
    @Test(
        """
        while the provider is deciding, the checkout holds no pooled connection, no transaction and no row lock; \
        its verdict is recorded after
        """
    )
    func nothingHeldDuringTheCall() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let held = HeldPaymentProvider()
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(3)  // a checkout holding the one connection would make the read below 503
            try await Database.with(
                url: env.appURL, logger: testLogger, clock: env.clock, maximumConnections: 1, limits: limits
            ) { database in
                try await env.withApp(payments: held, database: database) { client in
                    try await warmUp(client, env)
                    let placing = Task {
                        // a checkout that never reaches the provider ends the wait below
                        defer { held.enteredSignal.finish() }
                        return try await client.call(
                            .post, "/v1/checkout", token: env.fixture.tokens[.appService]!,
                            json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                            headers: .newIdempotencyKey)
                    }
                    var calls = held.entered.makeAsyncIterator()
                    let reference = try #require(await calls.next(), "the provider is being asked")
                    let read = try await client.call(
                        .get, "/v1/customers?limit=1", token: env.fixture.tokens[.backendManager]!)
                    #expect(read.status == 200, "the pool's one connection is free during the call: \(read.text)")
                    #expect(
                        try await env.ownerScalar(
                            """
                            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state \
                            LIKE 'idle in transaction%'
                            """,
                            as: Int.self) == 0)
                    let good = shop.goods["BOTTLE"]!.text
                    #expect(
                        try await env.ownerScalar(
                            "SELECT stock FROM goods WHERE id = '\(good)' FOR UPDATE NOWAIT", as: Int.self) == 9,
                        "the good's row is not locked, its unit already reserved")
                    #expect(
                        try await env.ownerScalar(
                            """
                            SELECT o.status || '/' || p.status FROM orders o JOIN payments p ON p.order_id = o.id \
                            WHERE o.id = '\(reference)'
                            """,
                            as: String.self) == "pending_payment/authorizing")
                    held.releaseSignal.yield()
                    let placed = try await placing.value
                    #expect(placed.status == 201, "\(placed.text)")
                    #expect(placed["status"] == "paid")
                    #expect(placed["id"] == reference)
                }
            }
        }
    }

    /// Opens the one-connection pool's connection with a first read, retried: opening it may take
    /// longer than the short lease timeout these tests use on a machine busy with other work.
    func warmUp(_ client: any TestClientProtocol, _ env: TestEnvironment) async throws {
        var warm = false
        for _ in 0..<10 where !warm {
            warm =
                try await client.call(.get, "/v1/customers?limit=1", token: env.fixture.tokens[.backendManager]!).status
                == 200
        }
        try #require(warm, "the pool's connection opened")
    }

    /// Step 1 of a checkout alone, as a crash right after it leaves it: the order's id.
    func reserveOnly(_ env: TestEnvironment, _ shop: ShopFixture, payments: any PaymentGateway, key: String)
        async throws -> UUID
    {
        let request = shop.request([("BOTTLE", 1, .usd), ("BAND", 1, .fitpoints)])
        let stage = try await env.database.run(
            ReserveStage(staged: Checkout(request, payments: payments, idempotencyKey: key)),
            context: env.context(.appService))
        guard case .call(let reservation) = stage else {
            throw TestSetupError(description: "the checkout had nothing to call")
        }
        return reservation.orderID
    }

    @Test(
        """
        reconciliation settles what a crash between the phases left: authorized at the provider → paid; never \
        made → payment_failed, stock and FitPoints back
        """
    )
    func reconciliationSettlesReservations() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let payments = SimulatedPaymentGateway()
            let authorized = try await reserveOnly(env, shop, payments: payments, key: "crash-1")
            let neverAsked = try await reserveOnly(env, shop, payments: payments, key: "crash-2")
            // The provider got the first call before the crash, not the second.
            _ = try await payments.authorize(
                PaymentAuthorization(
                    amountCents: 2_500, cardNumber: SimulatedPaymentGateway.approvedCard, idempotencyKey: "k",
                    reference: authorized.text))
            #expect(try await shop.stock("BOTTLE") == 8)
            #expect(try await shop.balance() == 3_400)
            try await env.withApp(payments: payments) { client in
                let manager = env.fixture.tokens[.backendManager]!
                let early = try await client.call(
                    .post, "/v1/payments/reconciliations", token: manager, json: #"{"older_than_minutes": 5}"#)
                #expect(early.json["checked"] as? Int == 0, "younger than asked: left alone")
                env.clock.advance(by: 6 * 60)
                let report = try await client.call(
                    .post, "/v1/payments/reconciliations", token: manager, json: #"{"older_than_minutes": 5}"#)
                #expect(report.status == 200, "\(report.text)")
                #expect(report.json["completed"] as? [String] == [authorized.text])
                #expect(report.json["cancelled"] as? [String] == [neverAsked.text])
            }
            let state = { (id: UUID) in
                try await env.ownerScalar(
                    """
                    SELECT o.status || '/' || p.status || '/' || coalesce(p.failure_code, '-') FROM orders o JOIN \
                    payments p ON p.order_id = o.id WHERE o.id = '\(id.text)'
                    """,
                    as: String.self)
            }
            #expect(try await state(authorized) == "paid/authorized/-")
            #expect(try await state(neverAsked) == "payment_failed/failed/not_attempted")
            #expect(try await shop.stock("BOTTLE") == 9, "the failed order's unit is back")
            #expect(try await shop.stock("BAND") == 2)
            #expect(try await shop.balance() == 4_200, "the failed order's FitPoints are back")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'payments.reconcile' AND target_type = 'order'",
                    as: Int.self) == 2)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test("the periodic reconciliation of serve settles a reservation on its own, as the system")
    func periodicReconciliation() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let order = try await reserveOnly(env, shop, payments: SimulatedPaymentGateway(), key: "crash-3")
            env.clock.advance(by: 11 * 60)
            let timers = ManualTimers()
            let service = ReconciliationService(
                database: env.database, policies: env.policies, payments: SimulatedPaymentGateway(),
                interval: .seconds(300), olderThanMinutes: 10, timers: timers)
            let running = Task { try await service.run() }
            defer { running.cancel() }
            await timers.waitUntilScheduled()
            #expect(
                try await env.ownerScalar("SELECT status FROM orders WHERE id = '\(order.text)'", as: String.self)
                    == "pending_payment", "nothing runs before the first interval")
            timers.advance(by: .seconds(300))
            // The run is over once the service waits for the next interval.
            await timers.waitUntilScheduled()
            let status = try await env.ownerScalar(
                "SELECT status FROM orders WHERE id = '\(order.text)'", as: String.self)
            #expect(status == "payment_failed")
            #expect(try await shop.stock("BOTTLE") == 10)
        }
    }

    /// A paid, accepted order of the shop, placed through `payments`: its id.
    func acceptedOrder(_ client: any TestClientProtocol, _ env: TestEnvironment, _ shop: ShopFixture) async throws
        -> String
    {
        let placed = try await client.call(
            .post, "/v1/checkout", token: env.fixture.tokens[.appService]!,
            json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
            headers: .newIdempotencyKey)
        let id = try #require(placed["id"], "\(placed.text)")
        #expect(try await client.call(.post, "/v1/orders/\(id)/accept", token: shop.partner.adminToken).status == 200)
        return id
    }

    @Test(
        """
        shipping captures with no connection, transaction or lock held while the provider answers; meanwhile \
        another move is 409 payment_in_progress
        """
    )
    func shipHoldsNothingDuringTheCapture() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let held = HeldPaymentProvider(holds: ["capture"])
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(3)
            try await Database.with(
                url: env.appURL, logger: testLogger, clock: env.clock, maximumConnections: 1, limits: limits
            ) { database in
                try await env.withApp(payments: held, database: database) { client in
                    let admin = shop.partner.adminToken
                    try await warmUp(client, env)
                    let order = try await acceptedOrder(client, env, shop)
                    let shipping = Task {
                        // a shipment that never reaches the provider ends the wait below
                        defer { held.enteredSignal.finish() }
                        return try await client.call(
                            .post, "/v1/orders/\(order)/ship", token: admin,
                            json: #"{"carrier":"UPS","tracking_number":"1Z9"}"#)
                    }
                    var calls = held.entered.makeAsyncIterator()
                    _ = try #require(await calls.next(), "the provider is asked to capture")
                    #expect(
                        try await client.call(.get, "/v1/orders/\(order)", token: admin)["status"] == "accepted",
                        "the pool's one connection is free")
                    #expect(
                        try await env.ownerScalar(
                            """
                            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state \
                            LIKE 'idle in transaction%'
                            """,
                            as: Int.self) == 0)
                    #expect(
                        try await env.ownerScalar(
                            "SELECT pending_operation FROM payments WHERE order_id = '\(order)'", as: String.self)
                            == "capture")
                    let cancel = try await client.call(
                        .post, "/v1/orders/\(order)/cancel", token: admin, json: #"{"reason":"changed mind"}"#)
                    #expect(cancel.status == 409)
                    #expect(cancel["code"] == "payment_in_progress")
                    held.releaseSignal.yield()
                    let shipped = try await shipping.value
                    #expect(shipped.status == 200, "\(shipped.text)")
                    #expect(shipped["status"] == "shipped")
                    #expect(shipped["tracking_number"] == "1Z9")
                    #expect(
                        try await env.ownerScalar(
                            """
                            SELECT status || '/' || captured_cents || '/' || coalesce(pending_operation, '-') \
                            FROM payments WHERE order_id = '\(order)'
                            """,
                            as: String.self) == "captured/2500/-")
                }
            }
        }
    }

    @Test(
        """
        a capture the provider refuses: 409 capture_failed, the order still accepted, its payment authorized, \
        nothing under way; both steps audited
        """
    )
    func refusedCapture() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            try await env.withApp(payments: HeldPaymentProvider(holds: [], declines: ["capture"])) { client in
                let order = try await acceptedOrder(client, env, shop)
                let refused = try await client.call(
                    .post, "/v1/orders/\(order)/ship", token: shop.partner.adminToken,
                    json: #"{"carrier":"UPS","tracking_number":"1Z9"}"#)
                #expect(refused.status == 409, "\(refused.text)")
                #expect(refused["code"] == "capture_failed")
                #expect(
                    try await client.call(.get, "/v1/orders/\(order)", token: shop.partner.adminToken)["status"]
                        == "accepted")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT status || '/' || coalesce(pending_operation, '-') FROM payments WHERE order_id = \
                        '\(order)'
                        """,
                        as: String.self)
                        == "authorized/-")
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT string_agg(reason, ' | ' ORDER BY id) FROM audit_events WHERE action = \
                        'orders.ship' AND target_id = '\(order)'
                        """,
                        as: String.self)
                            == """
                            asked the payment provider to capture | the payment provider refused to capture: \
                            capture_declined
                            """
                )
            }
        }
    }

    @Test(
        """
        a shipment left waiting on its capture by a crash is finished by reconciliation: captured once, the order \
        shipped with its tracking number
        """
    )
    func reconciliationFinishesMoves() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let payments = SimulatedPaymentGateway()
            let order = try await env.withApp(payments: payments) { client in try await acceptedOrder(client, env, shop)
            }
            let partner = OperationContext(
                principal: shop.partner.admin, requestID: "crash", sourceIP: nil, policies: env.policies)
            let ship = ShipOrder(
                orderID: try #require(UUID(uuidString: order)), carrier: "UPS", trackingNumber: "1Z77",
                payments: payments)
            let stage = try await env.database.run(ReserveStage(staged: ship), context: partner)
            guard case .call = stage else { throw TestSetupError(description: "the shipment had nothing to call") }
            env.clock.advance(by: 11 * 60)
            try await env.withApp(payments: payments) { client in
                let report = try await client.call(
                    .post, "/v1/payments/reconciliations", token: env.fixture.tokens[.backendManager]!, json: "{}")
                #expect(report.status == 200, "\(report.text)")
                #expect(report.json["finished_moves"] as? [String] == [order])
                let shipped = try await client.call(.get, "/v1/orders/\(order)", token: shop.partner.adminToken)
                #expect(shipped["status"] == "shipped")
                #expect(shipped["tracking_number"] == "1Z77")
            }
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT status || '/' || coalesce(pending_operation, '-') FROM payments WHERE order_id = \
                    '\(order)'
                    """,
                    as: String.self)
                    == "captured/-")
        }
    }
}
