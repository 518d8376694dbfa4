import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The http payment adapter against a fake provider: retries, timeouts, no double charge, circuit breaker")
struct HTTPPaymentGatewayTests {
    /// Attempts time out after 3 s on `timers`, which the test moves (a request the provider
    /// holds times out when the test says); no backoff wait.
    func adapter(
        _ url: String, attempts: Int = 4, threshold: Int = 5, breaker: CircuitBreaker? = nil,
        timers: ManualTimers = ManualTimers()
    ) -> HTTPPaymentGateway {
        var settings = HTTPPaymentGateway.Settings(provider: "fake", baseURL: url, apiKey: "sk_test_fake")
        settings.attemptTimeout = .seconds(3)
        settings.attempts = attempts
        settings.backoffBase = .zero
        settings.timers = timers
        settings.failureThreshold = threshold
        return HTTPPaymentGateway(settings: settings, breaker: breaker)
    }

    func authorization(_ key: String) -> PaymentAuthorization {
        PaymentAuthorization(
            amountCents: 2_500, cardNumber: SimulatedPaymentGateway.approvedCard, idempotencyKey: key,
            reference: "order-1")
    }

    @Test("the provider's payments are listed page by page (Stripe's starting_after), with references and refunds")
    func listsCharges() async throws {
        let provider = FakePaymentProvider()
        try await provider.serve { (url: String) async throws -> Void in
            let payments = adapter(url)
            let since = Date().addingTimeInterval(-5)
            for index in 1...105 {
                _ = try await payments.charge(
                    PaymentCharge(
                        amountCents: Int64(index), paymentMethod: "pm_card_visa", idempotencyKey: "charge:\(index)",
                        reference: "invoice-\(index):1"))
            }
            _ = try await payments.charge(
                PaymentCharge(
                    amountCents: 999, paymentMethod: SimulatedPaymentGateway.declinedMethod, idempotencyKey: "declined",
                    reference: "declined:1"))
            _ = try await payments.refund(paymentID: "pi_fake_7", amountCents: 3, idempotencyKey: "refund:7")
            let listed = try await payments.charges(since: since)
            #expect(listed.charges.count == 105 && listed.coveredSince == nil, "three pages, the decline not a payment")
            #expect(Set(listed.charges.map(\.reference)).count == 105)
            let seventh = listed.charges.first { $0.id == "pi_fake_7" }
            #expect(seventh?.reference == "invoice-7:1" && seventh?.amountCents == 7 && seventh?.refundedCents == 3)
            #expect(listed.charges.allSatisfy { $0.succeeded })
            #expect(try await payments.charges(since: Date().addingTimeInterval(60)).charges.isEmpty)
        }
    }

    @Test(
        """
        a lost answer (500 after the work), a dropped connection and a request the provider never answers (its \
        attempt times out) are retried with the same key: one charge
        """
    )
    func faultsDoNotDoubleCharge() async throws {
        let provider = FakePaymentProvider()
        try await provider.serve { (url: String) async throws -> Void in
            let timers = ManualTimers()
            let payments = adapter(url, timers: timers)
            await provider.inject([.error500AfterWork, .dropAfterWork, .hang])
            async let authorized = payments.authorize(authorization("checkout:key-1"))
            await provider.waitUntilHeld()
            #expect(timers.pending == 1, "the held attempt's timeout")
            timers.advance(by: .seconds(3))
            let outcome = try await authorized
            guard case .succeeded(let id) = outcome else {
                Issue.record("expected an authorization, got \(outcome)")
                return
            }
            #expect(id == "pi_fake_1")
            #expect(await provider.intentCount == 1, "four attempts, one PaymentIntent")
            #expect(await provider.requests == 4)
            // The same checkout retried later by our client: the same payment, still one charge.
            #expect(try await payments.authorize(authorization("checkout:key-1")) == .succeeded(id: "pi_fake_1"))
            #expect(await provider.intentCount == 1)
            // Capture and refund under faults: once each.
            await provider.inject([.error500AfterWork])
            #expect(
                try await payments.capture(paymentID: id, amountCents: 2_500, idempotencyKey: "capture:1")
                    == .succeeded(id: id))
            await provider.inject([.dropAfterWork])
            _ = try await payments.refund(paymentID: id, amountCents: 2_500, idempotencyKey: "refund:1")
            #expect(await provider.intents[id]?.refunded == 2_500, "refunded once, not twice")
        }
    }

    @Test(
        """
        a decline is a verdict, not retried; a provider that keeps failing is a PaymentProviderError after the \
        attempts
        """
    )
    func declinesAndExhaustedRetries() async throws {
        let provider = FakePaymentProvider()
        try await provider.serve { (url: String) async throws -> Void in
            let payments = adapter(url, attempts: 3)
            var declined = authorization("checkout:declined")
            declined.cardNumber = SimulatedPaymentGateway.insufficientFundsCard
            #expect(try await payments.authorize(declined) == .declined(code: "insufficient_funds"))
            #expect(await provider.requests == 1)
            await provider.inject([.error500, .error500, .error500])
            await #expect(throws: PaymentProviderError.self) {
                try await payments.authorize(authorization("checkout:down"))
            }
            #expect(await provider.requests == 4, "three attempts, then given up")
            #expect(await provider.intentCount == 0)
        }
    }

    @Test(
        """
        the circuit opens after failures in a row (calls then fail without reaching the provider) and closes \
        after a good trial
        """
    )
    func circuitBreaker() async throws {
        let provider = FakePaymentProvider()
        let clock = ManualInstant()
        let breaker = CircuitBreaker(failureThreshold: 2, cooldown: .seconds(30), now: { clock.now })
        try await provider.serve { (url: String) async throws -> Void in
            let payments = adapter(url, attempts: 1, breaker: breaker)
            await provider.inject([.error500, .error500])
            for key in ["a", "b"] {
                await #expect(throws: PaymentProviderError.self) { try await payments.authorize(authorization(key)) }
            }
            #expect(breaker.current == .open)
            let before = await provider.requests
            await #expect(throws: PaymentProviderError.unavailable("circuit open")) {
                try await payments.authorize(authorization("c"))
            }
            #expect(await provider.requests == before, "an open circuit does not call the provider")
            clock.advance(.seconds(31))
            #expect(try await payments.authorize(authorization("d")) == .succeeded(id: "pi_fake_1"))
            #expect(breaker.current == .closed)
        }
    }

    @Test("a half-open circuit's trial call that is cancelled gives the trial back: the circuit never stays half-open")
    func cancelledTrial() async throws {
        let provider = FakePaymentProvider()
        let clock = ManualInstant()
        let breaker = CircuitBreaker(failureThreshold: 1, cooldown: .seconds(30), now: { clock.now })
        try await provider.serve { (url: String) async throws -> Void in
            let payments = adapter(url, attempts: 1, breaker: breaker)
            await provider.inject([.error500])
            await #expect(throws: PaymentProviderError.self) { try await payments.authorize(authorization("a")) }
            #expect(breaker.current == .open)
            clock.advance(.seconds(31))
            await provider.inject([.hang])
            let trial = Task { try await payments.authorize(authorization("trial")) }
            await provider.waitUntilHeld()  // the trial reached the provider
            #expect(breaker.current == .halfOpen)
            trial.cancel()
            await #expect(throws: (any Error).self) { try await trial.value }
            #expect(breaker.current == .open, "the cancelled trial was given back, not left half-open")
            #expect(
                try await payments.authorize(authorization("next")) == .succeeded(id: "pi_fake_1"),
                "the next call is the new trial")
            #expect(breaker.current == .closed)
        }
    }

    @Test(
        """
        a saved payment method is charged at once, off session: retried under faults with one key, one captured \
        PaymentIntent; the provider's declines are verdicts
        """
    )
    func chargesAreCapturedOnce() async throws {
        let provider = FakePaymentProvider()
        try await provider.serve { (url: String) async throws -> Void in
            let payments = adapter(url, timers: ManualTimers())
            func charge(_ method: String, key: String) -> PaymentCharge {
                PaymentCharge(amountCents: 999, paymentMethod: method, idempotencyKey: key, reference: "invoice-1")
            }
            await provider.inject([.error500AfterWork, .dropAfterWork])
            let outcome = try await payments.charge(charge(SimulatedPaymentGateway.approvedMethod, key: "invoice:1"))
            #expect(outcome == .succeeded(id: "pi_fake_1"))
            #expect(
                try await payments.charge(charge(SimulatedPaymentGateway.approvedMethod, key: "invoice:1")) == outcome)
            #expect(await provider.intentCount == 1, "three attempts and a retry later, one PaymentIntent")
            let charged = await provider.intents["pi_fake_1"]
            #expect(charged?.captured == 999 && charged?.status == "succeeded")
            #expect(
                try await payments.charge(charge(SimulatedPaymentGateway.declinedMethod, key: "invoice:2"))
                    == .declined(code: "generic_decline"))
            #expect(
                try await payments.charge(charge(SimulatedPaymentGateway.insufficientFundsMethod, key: "invoice:3"))
                    == .declined(code: "insufficient_funds"))
            #expect(await provider.intentCount == 1, "a decline makes no PaymentIntent")
        }
    }

    @Test("the simulated provider charges by the test payment methods; the same key is the same payment")
    func simulatedCharges() async throws {
        let payments = SimulatedPaymentGateway()
        func charge(_ method: String, key: String = "k") async throws -> PaymentOutcome {
            try await payments.charge(
                PaymentCharge(amountCents: 999, paymentMethod: method, idempotencyKey: key, reference: "inv-\(key)"))
        }
        let first = try await charge(SimulatedPaymentGateway.approvedMethod, key: "a")
        #expect(try await charge("pm_anything_else", key: "a") == first, "the key decides the payment")
        #expect(try await payments.find(reference: "inv-a") == first)
        #expect(try await charge(SimulatedPaymentGateway.declinedMethod) == .declined(code: "card_declined"))
        #expect(
            try await charge(SimulatedPaymentGateway.insufficientFundsMethod) == .declined(code: "insufficient_funds"))
        #expect(
            try await charge(SimulatedPaymentGateway.authenticationRequiredMethod)
                == .declined(code: "authentication_required"))
        await #expect(throws: PaymentProviderError.timeout) { try await charge(SimulatedPaymentGateway.timeoutMethod) }
        await #expect(throws: PaymentProviderError.self) {
            try await charge(SimulatedPaymentGateway.providerErrorMethod)
        }
        #expect(PaymentCharge.isPaymentMethod("pm_card_visa") && PaymentCharge.isPaymentMethod("pm_1Abc_2"))
        for token in [
            "4242424242424242", "pm_", "pm_card visa", "pm_é", "PM_card", "pm_" + String(repeating: "a", count: 65),
        ] {
            #expect(!PaymentCharge.isPaymentMethod(token), "\(token)")
        }
    }

    @Test("a payment the provider reports canceled is never a success, except as the answer to a void")
    func canceledIsNotSuccess() {
        let canceled = HTTPPaymentGateway.Answer.object(["id": "pi_1", "status": "canceled"])
        #expect(HTTPPaymentGateway.outcome(canceled) == .declined(code: "canceled"))
        #expect(HTTPPaymentGateway.outcome(canceled, voiding: true) == .succeeded(id: "pi_1"))
        #expect(
            HTTPPaymentGateway.outcome(.object(["id": "pi_1", "status": "requires_capture"])) == .succeeded(id: "pi_1"))
    }

    @Test(
        """
        checkout through the service with the http adapter: a retried request after injected faults makes one \
        order and one charge
        """
    )
    func checkoutThroughTheService() async throws {
        let provider = FakePaymentProvider()
        try await provider.serve { (url: String) async throws -> Void in
            try await TestEnvironment.with { env in
                let shop = try await ShopFixture.make(env)
                let timers = ManualTimers()
                try await env.withApp(payments: adapter(url, timers: timers)) { client in
                    await provider.inject([.error500AfterWork, .hang])
                    let body = shop.checkoutJSON([("BOTTLE", 1, "usd")])
                    let app = env.fixture.tokens[.appService]!
                    async let placing = client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "order-77"])
                    await provider.waitUntilHeld()
                    timers.advance(by: .seconds(3))
                    let placed = try await placing
                    #expect(placed.status == 201, "\(placed.text)")
                    #expect(placed["status"] == "paid")
                    let again = try await client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "order-77"])
                    #expect(again["id"] == placed["id"])
                    #expect(await provider.intentCount == 1)
                    #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 1)
                    // The provider down past every attempt: 503, the order reserved and waiting for its verdict.
                    await provider.inject(Array(repeating: .error500, count: 4))
                    let down = try await client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "order-78"])
                    #expect(down.status == 503)
                    #expect(down["code"] == "payment_provider_unavailable")
                    #expect(try await shop.stock("BOTTLE") == 8)
                    #expect(
                        try await env.ownerScalar(
                            """
                            SELECT o.status || '/' || p.status FROM orders o JOIN payments p ON p.order_id = o.id \
                            WHERE o.id <> '\(placed["id"] ?? "")'
                            """,
                            as: String.self) == "pending_payment/authorizing")
                    // Back: the same request completes that order, authorized once.
                    let completed = try await client.call(
                        .post, "/v1/checkout", token: app, json: body, headers: ["Idempotency-Key": "order-78"])
                    #expect(completed.status == 201, "\(completed.text)")
                    #expect(completed["status"] == "paid")
                    #expect(await provider.intentCount == 2)
                    #expect(try await env.ownerScalar("SELECT count(*) FROM orders", as: Int.self) == 2)
                    #expect(try await shop.stock("BOTTLE") == 8)
                }
            }
        }
    }
}

/// A `ContinuousClock` instant the test moves.
final class ManualInstant: @unchecked Sendable {
    private let lock = NSLock()
    private var current = ContinuousClock.now
    var now: ContinuousClock.Instant { lock.withLock { current } }
    func advance(_ duration: Duration) { lock.withLock { current += duration } }
}
