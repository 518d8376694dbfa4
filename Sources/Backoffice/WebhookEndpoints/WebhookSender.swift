import AsyncHTTPClient
import BackofficePlatform
import Crypto
import Foundation
import Logging
import NIOCore
import ServiceLifecycle

/// How the service delivers webhooks.
package struct WebhookSettings: Sendable {
    /// How often the deliveries are read when none was due.
    package var interval: Duration = .seconds(1)
    /// The longest one attempt takes: connecting, sending and the receiver's answer.
    package var timeout: Duration = .seconds(10)
    /// How long a claimed delivery is left to its sender before another process takes it: longer
    /// than an attempt.
    package var claimSeconds = 60
    /// How long a failing delivery is retried: three days, then its endpoint is disabled.
    package var giveUpAfter: TimeInterval = 3 * 86_400
    /// Where an endpoint may be: its URL is checked again at every attempt, after DNS.
    package var outbound = OutboundSettings()

    package init() {}
}

/// The wait after each failed attempt: a minute, five, half an hour, two hours, five, then ten
/// hours between attempts until the delivery is `giveUpAfter` old.
enum WebhookBackoff {
    static let waits: [TimeInterval] = [60, 300, 1_800, 7_200, 18_000, 36_000]

    static func wait(afterAttempt attempt: Int) -> TimeInterval { waits[min(max(attempt, 1), waits.count) - 1] }
}

/// Delivers the shops' webhook events: every `interval`, claims the first pending delivery of an
/// endpoint (oldest due first, `SKIP LOCKED`, so several processes share the work) and posts it.
///
/// Guarantees: each delivery is posted at least once, always with its event's id
/// (`Backoffice-Event-Id`, so a receiver drops a repeat), and in order per endpoint: a delivery
/// is not tried while an earlier one of its endpoint is pending. A process that dies mid-attempt
/// leaves a claim that lapses after `claimSeconds`. The body is signed as the payment providers
/// sign theirs (`WebhookSignature`: `Backoffice-Signature: t=…,v1=…`, HMAC-SHA256 of `<t>.<body>`
/// under each secret that signs, two during a roll's overlap), so Stripe's libraries verify it.
/// Every attempt resolves the URL again and posts only to a public address (`OutboundTarget`), to
/// that very address (no second lookup), and follows no redirect. A 2xx answer delivers it;
/// anything else is retried (`WebhookBackoff`) until the delivery is `giveUpAfter` old, when it
/// fails and its endpoint is disabled, audited, with a mail to the shop's admins.
package struct WebhookSender: Service {
    let database: Database
    let policies: PolicySet
    let settings: WebhookSettings
    let secrets: WebhookEndpointSecrets

    package init(database: Database, policies: PolicySet, settings: WebhookSettings, secrets: WebhookEndpointSecrets) {
        (self.database, self.policies, self.settings, self.secrets) = (database, policies, settings, secrets)
    }

    package func run() async throws {
        await drainEvery(settings.interval, logger: database.logger, failure: "webhook delivery failed") {
            try await deliverDue()
        }
    }

    /// Claims and tries, one at a time, up to `limit` due deliveries; how many were claimed.
    @discardableResult
    package func deliverDue(limit: Int = 50) async throws -> Int {
        var count = 0
        while count < limit, let claimed = try await system({ try await WebhookClaim.next(settings, in: $0) }) {
            let started = ContinuousClock.now
            let outcome = await attempt(claimed)
            let took = started.duration(to: .now)
            try await system { try await claimed.record(outcome, took: took, settings: settings, in: $0) }
            count += 1
        }
        return count
    }

    /// Posts `claimed` to its endpoint once; what came of it.
    func attempt(_ claimed: WebhookClaim) async -> WebhookClaim.Outcome {
        let target: OutboundTarget
        do {
            target = try await OutboundTarget.check(
                claimed.endpoint.url, rules: settings.outbound.rules, resolver: settings.outbound.resolver)
        } catch {
            return .failed(status: nil, response: nil, error: "refused: \(error)")
        }
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.dnsOverride = [target.host: target.address]
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(10))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { client.shutdown { _ in } }
        var request = HTTPClientRequest(url: claimed.endpoint.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "HealthTrack-Backoffice-Webhooks/1")
        request.headers.add(name: "Backoffice-Event-Id", value: claimed.eventID.text)
        request.headers.add(name: "Backoffice-Event-Type", value: claimed.type)
        let now = claimed.claimedAt
        request.headers.add(
            name: "Backoffice-Signature",
            value: WebhookSignature.header(
                body: Array(claimed.payload), secrets: secrets.signing(claimed.endpoint, at: now), at: now))
        request.body = .bytes(ByteBuffer(data: claimed.payload))
        do {
            let response = try await client.execute(request, timeout: .init(settings.timeout))
            var kept = ByteBuffer()
            for try await part in response.body where kept.readableBytes < 1_000 { kept.writeImmutableBuffer(part) }
            let text = Self.storable(String(buffer: kept), at: 1_000)
            let status = Int(response.status.code)
            return (200..<300).contains(status)
                ? .delivered(status: status, response: text)
                : .failed(status: status, response: text, error: nil)
        } catch {
            return .failed(status: nil, response: nil, error: Self.storable(String(describing: error), at: 500))
        }
    }

    /// `text` as an attempt keeps it: NUL (which PostgreSQL's text cannot hold) dropped, then cut to
    /// `limit` characters (invalid UTF-8 was already read as U+FFFD).
    private static func storable(_ text: String, at limit: Int) -> String {
        String(text.replacingOccurrences(of: "\0", with: "").prefix(limit))
    }

    private func system<T: Sendable>(_ body: (UnitOfWork) async throws -> T) async throws -> T {
        let context = OperationContext.system("webhooks", policies: policies)
        return try await database.transaction(for: Principal.system) { connection in
            try await body(database.unit(connection, context))
        }
    }
}
