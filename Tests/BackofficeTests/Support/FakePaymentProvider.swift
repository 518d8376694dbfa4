import Foundation
import Hummingbird
import NIOCore

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A payment provider on loopback that speaks the subset of Stripe's API `HTTPPaymentGateway`
/// uses, keeps its PaymentIntents by idempotency key (a repeated key answers the first intent),
/// and injects faults on the requests the test names: slow answers, 5xx (before or after doing
/// the work), dropped connections, and requests held unanswered (`waitUntilHeld()` says when).
actor FakePaymentProvider {
    enum Fault: Sendable {
        /// Hold the request unanswered until the provider stops (the client's attempt times out).
        case hang
        /// 500 without doing the work.
        case error500
        /// Do the work, then answer 500 (the answer is lost: the client must retry with the key).
        case error500AfterWork
        /// Do the work, then close the connection without answering.
        case dropAfterWork
    }

    struct Intent {
        let id: String
        var status: String
        let amount: Int64
        var captured: Int64 = 0
        var refunded: Int64 = 0
        var reference: String? = nil
        var created: Int64 = 0
        /// The order it was made in (its id's number).
        var number: Int { Int(id.split(separator: "_").last ?? "") ?? 0 }
    }

    private var faults: [Fault] = []
    private(set) var intents: [String: Intent] = [:]
    private var byKey: [String: String] = [:]
    private(set) var requests = 0
    /// Opened when the provider stops: releases the requests it holds.
    private let stopping = Latch()
    private var held = 0
    private var holdWatchers: [CheckedContinuation<Void, Never>] = []

    /// Returns once a request is held unanswered (`Fault.hang`).
    func waitUntilHeld() async {
        guard held == 0 else {
            held -= 1
            return
        }
        await withCheckedContinuation { holdWatchers.append($0) }
    }

    private func hold() async {
        if holdWatchers.isEmpty { held += 1 } else { holdWatchers.removeFirst().resume() }
        await stopping.wait()
    }

    /// Faults for the next requests, in order.
    func inject(_ faults: [Fault]) { self.faults = faults }

    /// PaymentIntents created: a double charge would show as two for one order.
    var intentCount: Int { intents.count }

    private func nextFault() -> Fault? {
        requests += 1
        return faults.isEmpty ? nil : faults.removeFirst()
    }

    /// Handles one call; nil means drop the connection.
    func handle(_ method: HTTPRequest.Method, _ path: String, form: [String: String], key: String?) async -> (
        Int, String
    )? {
        let fault = nextFault()
        if case .hang = fault {
            await hold()
            return nil
        }
        if case .error500 = fault { return (500, #"{"error": {"type": "api_error"}}"#) }
        let answer = work(method, path, form: form, key: key)
        switch fault {
        case .error500AfterWork: return (500, #"{"error": {"type": "api_error"}}"#)
        case .dropAfterWork: return nil
        default: return answer
        }
    }

    private func work(_ method: HTTPRequest.Method, _ path: String, form: [String: String], key: String?) -> (
        Int, String
    ) {
        let parts = path.split(separator: "/").map(String.init)
        func json(_ intent: Intent) -> (Int, String) {
            (200, #"{"id": "\#(intent.id)", "status": "\#(intent.status)", "amount": \#(intent.amount)}"#)
        }
        switch (method, parts.count, parts.last) {
        case (.post, 2, "payment_intents"):
            if let key, let id = byKey[key], let intent = intents[id] { return json(intent) }
            switch form["payment_method"] {
            case SimulatedPaymentGateway.declinedCard, SimulatedPaymentGateway.declinedMethod:
                return (
                    402,
                    #"{"error": {"type": "card_error", "code": "card_declined", "decline_code": "generic_decline"}}"#
                )
            case SimulatedPaymentGateway.insufficientFundsCard, SimulatedPaymentGateway.insufficientFundsMethod:
                return (
                    402,
                    #"{"error": {"type": "card_error", "code": "card_declined", "decline_code": "insufficient_funds"}}"#
                )
            default:
                // Confirmed without `capture_method=manual` (an off-session charge): captured at once.
                let captured = form["confirm"] == "true" && form["capture_method"] != "manual"
                var intent = Intent(
                    id: "pi_fake_\(intents.count + 1)", status: captured ? "succeeded" : "requires_capture",
                    amount: Int64(form["amount"] ?? "") ?? 0)
                if captured { intent.captured = intent.amount }
                (intent.reference, intent.created) = (form["metadata[reference]"], Int64(Date().timeIntervalSince1970))
                intents[intent.id] = intent
                if let key { byKey[key] = intent.id }
                return json(intent)
            }
        case (.post, 4, "capture"):
            guard var intent = intents[parts[2]] else { return (404, #"{"error": {"code": "resource_missing"}}"#) }
            intent.status = "succeeded"
            intent.captured = Int64(form["amount_to_capture"] ?? "") ?? intent.amount
            intents[intent.id] = intent
            return json(intent)
        case (.post, 4, "cancel"):
            guard var intent = intents[parts[2]] else { return (404, #"{"error": {"code": "resource_missing"}}"#) }
            intent.status = "canceled"
            intents[intent.id] = intent
            return json(intent)
        case (.post, 2, "refunds"):
            guard var intent = intents[form["payment_intent"] ?? ""] else {
                return (404, #"{"error": {"code": "resource_missing"}}"#)
            }
            if let key, byKey[key] != nil { return (200, #"{"id": "re_\#(intent.id)", "status": "succeeded"}"#) }
            intent.refunded += Int64(form["amount"] ?? "") ?? 0
            intents[intent.id] = intent
            if let key { byKey[key] = intent.id }
            return (200, #"{"id": "re_\#(intent.id)", "status": "succeeded"}"#)
        case (.get, 2, "payment_intents"):
            return list(form)
        case (.get, 3, _):
            guard let intent = intents[parts[2]] else { return (404, #"{"error": {"code": "resource_missing"}}"#) }
            return json(intent)
        case (.post, 2, "bank_account_verifications"):
            let verified = form["account_number"] != SimulatedPaymentGateway.closedAccount
            return (
                200,
                verified
                    ? #"{"id": "ba_fake", "status": "verified"}"#
                    : #"{"id": "ba_fake", "status": "failed", "failure_code": "account_closed"}"#
            )
        default: return (404, #"{"error": {"code": "unknown_route"}}"#)
        }
    }

    /// Stripe's list of PaymentIntents: created at or after `created[gte]`, oldest first here, `limit`
    /// a page after `starting_after`, each with its latest charge's refunds.
    private func list(_ query: [String: String]) -> (Int, String) {
        let since = Int64(query["created[gte]"] ?? "") ?? 0
        let after = query["starting_after"].flatMap { intents[$0]?.number } ?? 0
        let all = intents.values.filter { $0.created >= since && $0.number > after }.sorted { $0.number < $1.number }
        let page = all.prefix(Int(query["limit"] ?? "") ?? 10)
        let items = page.map { intent in
            """
            {"id": "\(intent.id)", "status": "\(intent.status)", "amount": \(intent.amount), \
            "amount_received": \(intent.captured), "created": \(intent.created), \
            "metadata": {"reference": "\(intent.reference ?? "")"}, \
            "latest_charge": {"amount_refunded": \(intent.refunded)}}
            """
        }
        let more = all.count > page.count
        return (200, #"{"object": "list", "has_more": \#(more), "data": [\#(items.joined(separator: ","))]}"#)
    }

    /// Serves the fake on a free loopback port for the duration of `body`, which gets its base URL.
    func serve<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router(context: FakeProviderContext.self)
        let provider = self
        router.on("/**", method: .post) { request, context in try await provider.respond(request, context) }
        router.on("/**", method: .get) { request, context in try await provider.respond(request, context) }
        let (ports, announce) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                announce.yield(channel.localAddress?.port ?? 0)
                announce.finish()
            })
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                defer { announce.finish() }
                try await app.runService()
                return nil
            }
            // The port, once the server runs (its running callback); a server that fails first throws here.
            var announced = ports.makeAsyncIterator()
            guard let port = await announced.next(), port != 0 else {
                _ = try await group.next()
                throw FakeProviderNotRunning()
            }
            let result: Result<T, any Error>
            do { result = .success(try await body("http://127.0.0.1:\(port)")) } catch {
                result = .failure(error)
            }
            stopping.open()
            group.cancelAll()
            return try result.get()
        }
    }

    nonisolated private func respond(_ request: Request, _ context: FakeProviderContext) async throws -> Response {
        var request = request
        let bytes = try await request.collectBody(upTo: 1 << 20)
        var form: [String: String] = [:]
        for pair in (String(buffer: bytes) + "&" + (request.uri.query ?? "")).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if kv.count == 2 { form[kv[0]] = kv[1] }
        }
        guard
            let (status, json) = await handle(
                request.method, request.uri.path, form: form, key: request.headers[.init("Idempotency-Key")!])
        else {
            try? await context.channel.close()
            return Response(status: .internalServerError)
        }
        return Response(
            status: .init(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}

/// The fake's request context: keeps the channel, so a fault can drop the connection.
struct FakeProviderContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The fake provider stopped before it ran.
struct FakeProviderNotRunning: Error {}
