import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice

/// A provider whose authorizations wait until the test lets them answer (authorized).
final class HeldPaymentProvider: PaymentValidator {
    let provider = "simulated"
    let (entered, enteredSignal) = AsyncStream<String>.makeStream()
    let (released, releaseSignal) = AsyncStream<Void>.makeStream()

    func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome {
        enteredSignal.yield(request.reference)
        for await _ in released { break }
        return .succeeded(id: "pi_held_" + request.reference)
    }

    func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification { .verified("ba_held") }
    func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome { .succeeded(id: paymentID) }
    func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome { .succeeded(id: paymentID) }
    func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome { .succeeded(id: paymentID) }
    func status(of paymentID: String) async throws -> PaymentOutcome { .succeeded(id: paymentID) }
    func find(reference: String) async throws -> PaymentOutcome? { nil }
}

@Suite("Checkout in two phases: no transaction waits on the payment provider; what a crash leaves, reconciliation settles")
struct TwoPhaseCheckoutTests {
    @Test("while the provider is deciding, the checkout holds no pooled connection, no transaction and no row lock; its verdict is recorded after")
    func nothingHeldDuringTheCall() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let held = HeldPaymentProvider()
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(3)  // a checkout holding the one connection would make the read below 503
            try await Database.with(url: env.appURL, logger: testLogger, clock: env.clock, maximumConnections: 1, limits: limits) { database in
                try await env.withApp(payments: held, database: database) { client in
                    let placing = Task {
                        try await client.call(
                            .post, "/v1/checkout", token: env.fixture.tokens[.appService]!, json: shop.checkoutJSON([("BOTTLE", 1, "usd")]),
                            headers: .newIdempotencyKey)
                    }
                    var calls = held.entered.makeAsyncIterator()
                    let reference = try #require(await calls.next(), "the provider is being asked")
                    let read = try await client.call(.get, "/v1/customers?limit=1", token: env.fixture.tokens[.backendManager]!)
                    #expect(read.status == 200, "the pool's one connection is free during the call: \(read.text)")
                    #expect(
                        try await env.ownerScalar(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
                            as: Int.self) == 0)
                    let good = shop.goods["BOTTLE"]!.text
                    #expect(
                        try await env.ownerScalar("SELECT stock FROM goods WHERE id = '\(good)' FOR UPDATE NOWAIT", as: Int.self) == 9,
                        "the good's row is not locked, its unit already reserved")
                    #expect(
                        try await env.ownerScalar(
                            "SELECT o.status || '/' || p.status FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.id = '\(reference)'",
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

    /// Step 1 of a checkout alone, as a crash right after it leaves it: the order's id.
    func reserveOnly(_ env: TestEnvironment, _ shop: ShopFixture, payments: any PaymentValidator, key: String) async throws -> UUID {
        let request = CheckoutRequest(
            customerID: shop.customer.id,
            lines: [
                .init(goodID: shop.goods["BOTTLE"]!, quantity: 1, payIn: .usd, expectedUnitPrice: 2_500),
                .init(goodID: shop.goods["BAND"]!, quantity: 1, payIn: .fitpoints, expectedUnitPrice: 800),
            ],
            shipping: Order.Shipping(
                name: "Buyer", address: ShopAddress(line1: "1 St", line2: nil, city: "Town", region: "TX", postalCode: "1", country: "US")),
            paymentMethod: SimulatedPaymentValidator.approvedCard)
        let stage = try await env.database.run(
            ReserveStage(staged: Checkout(request, payments: payments, idempotencyKey: key)), context: env.context(.appService))
        guard case .call(let reservation) = stage else { throw TestSetupError(description: "the checkout had nothing to call") }
        return reservation.orderID
    }

    @Test(
        "reconciliation settles what a crash between the phases left: authorized at the provider → paid; never made → payment_failed, stock and FitPoints back"
    )
    func reconciliationSettlesReservations() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let payments = SimulatedPaymentValidator()
            let authorized = try await reserveOnly(env, shop, payments: payments, key: "crash-1")
            let neverAsked = try await reserveOnly(env, shop, payments: payments, key: "crash-2")
            // The provider got the first call before the crash, not the second.
            _ = try await payments.authorize(
                PaymentAuthorization(
                    amountCents: 2_500, cardNumber: SimulatedPaymentValidator.approvedCard, idempotencyKey: "k", reference: authorized.text))
            #expect(try await shop.stock("BOTTLE") == 8)
            #expect(try await shop.balance() == 3_400)
            try await env.withApp(payments: payments) { client in
                let manager = env.fixture.tokens[.backendManager]!
                let early = try await client.call(.post, "/v1/payments/reconciliations", token: manager, json: #"{"older_than_minutes": 5}"#)
                #expect(early.json["checked"] as? Int == 0, "younger than asked: left alone")
                env.clock.advance(by: 6 * 60)
                let report = try await client.call(.post, "/v1/payments/reconciliations", token: manager, json: #"{"older_than_minutes": 5}"#)
                #expect(report.status == 200, "\(report.text)")
                #expect(report.json["completed"] as? [String] == [authorized.text])
                #expect(report.json["cancelled"] as? [String] == [neverAsked.text])
            }
            let state = { (id: UUID) in
                try await env.ownerScalar(
                    "SELECT o.status || '/' || p.status || '/' || coalesce(p.failure_code, '-') FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.id = '\(id.text)'",
                    as: String.self)
            }
            #expect(try await state(authorized) == "paid/authorized/-")
            #expect(try await state(neverAsked) == "payment_failed/failed/not_attempted")
            #expect(try await shop.stock("BOTTLE") == 9, "the failed order's unit is back")
            #expect(try await shop.stock("BAND") == 2)
            #expect(try await shop.balance() == 4_200, "the failed order's FitPoints are back")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'payments.reconcile' AND target_type = 'order'", as: Int.self) == 2)
            #expect(try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test("the periodic reconciliation of serve settles a reservation on its own, as the system")
    func periodicReconciliation() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let order = try await reserveOnly(env, shop, payments: SimulatedPaymentValidator(), key: "crash-3")
            env.clock.advance(by: 11 * 60)
            let service = ReconciliationService(
                database: env.database, policies: env.policies, payments: SimulatedPaymentValidator(), interval: .milliseconds(50),
                olderThanMinutes: 10)
            let running = Task { try await service.run() }
            defer { running.cancel() }
            var status: String?
            for _ in 0..<200 where status != "payment_failed" {
                try await Task.sleep(for: .milliseconds(50))
                status = try await env.ownerScalar("SELECT status FROM orders WHERE id = '\(order.text)'", as: String.self)
            }
            #expect(status == "payment_failed")
            #expect(try await shop.stock("BOTTLE") == 10)
        }
    }
}
