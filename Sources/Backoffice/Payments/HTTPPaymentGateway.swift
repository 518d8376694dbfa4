import AsyncHTTPClient
import BackofficePlatform
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A payment provider's REST API, modelled on Stripe's: form-encoded requests with a bearer API
/// key; PaymentIntents (`capture_method=manual` to authorize, `/capture`, `/cancel`), Refunds,
/// and bank-account verifications; every POST carries the caller's idempotency key in
/// `Idempotency-Key`, so the provider performs it once however often it is sent.
///
/// - Each attempt has a timeout. An attempt that got no answer (timeout, dropped connection),
///   a 5xx or a 429 is retried with exponential backoff and full jitter — only because every call
///   is retry-safe (an idempotency key, or a GET). A 4xx is final.
/// - A circuit breaker counts calls that reached no verdict: after `failureThreshold` in a row it
///   opens and calls fail at once for `cooldown`, then one trial call decides.
/// - Card errors (HTTP 402, `card_error`) are verdicts (`declined` with the provider's code);
///   what reached no verdict throws `PaymentProviderError` (503 for our clients).
package struct HTTPPaymentGateway: PaymentGateway {
    package struct Settings: Sendable {
        package var provider: String
        package var baseURL: String
        package var apiKey: String
        package var attemptTimeout: Duration = .seconds(5)
        package var attempts: Int = 3
        package var backoffBase: Duration = .milliseconds(100)
        package var failureThreshold: Int = 5
        package var cooldown: Duration = .seconds(30)
        /// What keeps the attempt timeouts and backoff waits: NIO's scheduled tasks in the service,
        /// `ManualTimers` in tests.
        package var timers: any Timers = EventLoopTimers()

        package init(provider: String, baseURL: String, apiKey: String) {
            self.provider = provider
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.apiKey = apiKey
        }
    }

    package var provider: String { settings.provider }
    let settings: Settings
    let client: HTTPClient
    let breaker: CircuitBreaker

    package init(settings: Settings, client: HTTPClient = .shared, breaker: CircuitBreaker? = nil) {
        self.settings = settings
        self.client = client
        self.breaker =
            breaker ?? CircuitBreaker(failureThreshold: settings.failureThreshold, cooldown: settings.cooldown)
    }

    package func verifyBankAccount(_ account: BankAccount) async throws -> BankAccountVerification {
        let answer = try await post(
            "verify_bank_account", "/v1/bank_account_verifications",
            [
                "routing_number": account.routingNumber, "account_number": account.accountNumber,
                "account_holder_name": account.holderName,
            ],
            // a hash: the account number never travels in a header (headers are logged by proxies)
            idempotencyKey: "verify:"
                + hex(Array(SHA256.hash(data: Data((account.routingNumber + ":" + account.accountNumber).utf8)))))
        switch answer {
        case .object(let object):
            guard let id = object["id"] as? String, object["status"] as? String == "verified" else {
                return .failed((object["failure_code"] as? String) ?? "unverified")
            }
            return .verified(id)
        case .cardError(let code): return .failed(code)
        }
    }

    package func authorize(_ request: PaymentAuthorization) async throws -> PaymentOutcome {
        let answer = try await post(
            "authorize", "/v1/payment_intents",
            [
                "amount": String(request.amountCents), "currency": "usd", "payment_method": request.cardNumber,
                "capture_method": "manual",
                "confirm": "true", "metadata[reference]": request.reference,
            ], idempotencyKey: request.idempotencyKey)
        return Self.outcome(answer)
    }

    /// An off-session PaymentIntent, confirmed and captured at once (`succeeded`); the provider's
    /// `authentication_required` and other card errors are declines.
    package func charge(_ request: PaymentCharge) async throws -> PaymentOutcome {
        let answer = try await post(
            "charge", "/v1/payment_intents",
            [
                "amount": String(request.amountCents), "currency": "usd", "payment_method": request.paymentMethod,
                "confirm": "true", "off_session": "true", "metadata[reference]": request.reference,
            ], idempotencyKey: request.idempotencyKey)
        return Self.outcome(answer)
    }

    package func capture(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        Self.outcome(
            try await post(
                "capture", "/v1/payment_intents/\(paymentID)/capture", ["amount_to_capture": String(amountCents)],
                idempotencyKey: idempotencyKey))
    }

    package func refund(paymentID: String, amountCents: Int64, idempotencyKey: String) async throws -> PaymentOutcome {
        Self.outcome(
            try await post(
                "refund", "/v1/refunds", ["payment_intent": paymentID, "amount": String(amountCents)],
                idempotencyKey: idempotencyKey))
    }

    package func void(paymentID: String, idempotencyKey: String) async throws -> PaymentOutcome {
        Self.outcome(
            try await post("void", "/v1/payment_intents/\(paymentID)/cancel", [:], idempotencyKey: idempotencyKey),
            voiding: true)
    }

    package func status(of paymentID: String) async throws -> PaymentOutcome {
        Self.outcome(try await call("status", .GET, "/v1/payment_intents/\(paymentID)", body: nil, idempotencyKey: nil))
    }

    /// Stripe's search over the metadata every authorization carries (`metadata[reference]`).
    package func find(reference: String) async throws -> PaymentOutcome? {
        let query = Self.formEncoded(["query": "metadata['reference']:'\(reference)'"])
        let answer = try await call("find", .GET, "/v1/payment_intents/search?\(query)", body: nil, idempotencyKey: nil)
        guard case .object(let object) = answer, let first = (object["data"] as? [[String: Any]])?.first else {
            return nil
        }
        return Self.outcome(.object(first))
    }

    /// Stripe's list of PaymentIntents created since `since`, 100 a page (`starting_after`), each
    /// with its latest charge expanded for the amount refunded; at most `listLimit` payments.
    package func charges(since: Date) async throws -> ProviderCharges {
        var found: [ProviderCharge] = []
        var after: String?
        repeat {
            var form = [
                "created[gte]": String(Int64(since.timeIntervalSince1970.rounded(.down))), "limit": "100",
                "expand[]": "data.latest_charge",
            ]
            if let after { form["starting_after"] = after }
            let answer = try await call(
                "list", .GET, "/v1/payment_intents?\(Self.formEncoded(form))", body: nil, idempotencyKey: nil)
            guard case .object(let page) = answer, let data = page["data"] as? [[String: Any]] else { break }
            found += data.compactMap(Self.charge)
            after = page["has_more"] as? Bool == true ? data.last?["id"] as? String : nil
        } while after != nil && found.count < Self.listLimit
        return ProviderCharges(found)
    }

    /// The most payments one listing reads.
    static let listLimit = 1_000_000

    package var isAcceptingCalls: Bool { breaker.isAdmitting }

    /// Every attempt timing out, with the longest backoff between them.
    package var longestCall: Duration {
        settings.attemptTimeout * settings.attempts
            + (1..<max(settings.attempts, 1)).reduce(Duration.zero) {
                $0 + settings.backoffBase * (1 << min($1 - 1, 10))
            }
    }

    private func post(_ operation: String, _ path: String, _ form: [String: String], idempotencyKey: String)
        async throws -> Answer
    {
        try await call(operation, .POST, path, body: Self.formEncoded(form), idempotencyKey: idempotencyKey)
    }

    /// One call: through the breaker, retried while it reaches no verdict; counted on `/metrics`
    /// by `operation` and outcome (`ok`, `declined`, `failed`: no verdict, circuit open included).
    /// Every exit is recorded by the breaker: a call cancelled before its verdict gives a half-open
    /// circuit's trial back (`CircuitBreaker.abandon()`), so it never stays half-open.
    private func call(_ operation: String, _ method: HTTPMethod, _ path: String, body: String?, idempotencyKey: String?)
        async throws -> Answer
    {
        do { try breaker.admit() } catch {
            ServiceMetrics.paymentCall(operation, "failed")
            throw error
        }
        do {
            return try await attempts(operation, method, path, body: body, idempotencyKey: idempotencyKey)
        } catch is CancellationError {
            breaker.abandon()
            throw CancellationError()
        }
    }

    /// The attempts of one admitted call, recording its verdict or its failure with the breaker.
    private func attempts(
        _ operation: String, _ method: HTTPMethod, _ path: String, body: String?, idempotencyKey: String?
    ) async throws
        -> Answer
    {
        var attempt = 0
        while true {
            attempt += 1
            do {
                let answer = try await once(method, path, body: body, idempotencyKey: idempotencyKey)
                breaker.record(success: true)
                if case .cardError = answer {
                    ServiceMetrics.paymentCall(operation, "declined")
                } else {
                    ServiceMetrics.paymentCall(operation, "ok")
                }
                return answer
            } catch let failure as Retryable {
                guard attempt < settings.attempts, method == .GET || idempotencyKey != nil, !Task.isCancelled else {
                    if Task.isCancelled { throw CancellationError() }
                    breaker.record(success: false)
                    ServiceMetrics.paymentCall(operation, "failed")
                    throw failure.error
                }
                try await settings.timers.sleep(for: backoff(attempt))
            }
        }
    }

    /// Full jitter: a random wait up to base × 2^(attempt − 1).
    func backoff(_ attempt: Int) -> Duration {
        let ceiling = settings.backoffBase * (1 << min(attempt - 1, 10))
        return ceiling * Double.random(in: 0...1)
    }

    /// A failed attempt that may be tried again, with what to throw when it is not.
    private struct Retryable: Error { let error: PaymentProviderError }

    private func once(_ method: HTTPMethod, _ path: String, body: String?, idempotencyKey: String?) async throws
        -> Answer
    {
        var request = HTTPClientRequest(url: settings.baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(settings.apiKey)")
        if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let (response, bytes) = try await exchange(request)
        let object = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
        switch response.status.code {
        case 200..<300: return .object(object)
        case 402:
            let error = object["error"] as? [String: Any]
            return .cardError((error?["decline_code"] as? String) ?? (error?["code"] as? String) ?? "card_declined")
        case 429, 500..<600: throw Retryable(error: .unavailable("HTTP \(response.status.code)"))
        default:
            breaker.record(success: true)  // the provider works; the request was refused
            let error = object["error"] as? [String: Any]
            throw PaymentProviderError.unavailable(
                "refused (HTTP \(response.status.code)): \((error?["code"] as? String) ?? "invalid_request")")
        }
    }

    /// One attempt's request and answer, given up (cancelled) when `attemptTimeout` passes on
    /// `settings.timers` first.
    private func exchange(_ request: HTTPClientRequest) async throws -> (HTTPClientResponse, ByteBuffer) {
        let client = self.client
        let attempt = Task {
            let response = try await client.execute(request, deadline: .distantFuture)
            return (response, try await response.body.collect(upTo: 1 << 20))
        }
        let timedOut = TimeoutFlag()
        let timer = settings.timers.schedule(in: settings.attemptTimeout) {
            timedOut.raise()
            attempt.cancel()
        }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await attempt.value
            } onCancel: {
                attempt.cancel()
            }
        } catch {
            if timedOut.isRaised { throw Retryable(error: .timeout) }
            if Task.isCancelled { throw CancellationError() }
            if let error = error as? HTTPClientError, error == .readTimeout || error == .connectTimeout {
                throw Retryable(error: .timeout)
            }
            throw Retryable(error: .unavailable("no answer: \(type(of: error))"))
        }
    }

    /// Whether an attempt's timer fired.
    private final class TimeoutFlag: Sendable {
        private let raised = Atomic(false)
        func raise() { raised.store(true, ordering: .relaxed) }
        var isRaised: Bool { raised.load(ordering: .relaxed) }
    }

    /// `application/x-www-form-urlencoded`, keys sorted.
    static func formEncoded(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return form.sorted { $0.key < $1.key }.map { "\(escape($0.key))=\(escape($0.value))" }.joined(separator: "&")
    }
}
