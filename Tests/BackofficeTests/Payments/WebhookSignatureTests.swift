import Foundation
import Logging
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension PaymentWebhookTests {
    @Test(
        "a signature header with more than five v1 entries is refused even when one of them is right; five are accepted"
    )
    func atMostFiveSignatures() {
        let body = Array(#"{"id":"evt"}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let secret = "whsec_the_right_secret_00"
        let decoys = (1...5).map { "whsec_decoy_secret_\($0)_000" }
        let five = WebhookSignature.header(body: body, secrets: Array(decoys.prefix(4)) + [secret], at: now)
        let six = WebhookSignature.header(body: body, secrets: decoys + [secret], at: now)
        #expect(WebhookSignature.verify(header: five, body: body, secrets: [secret], now: now))
        #expect(!WebhookSignature.verify(header: six, body: body, secrets: [secret], now: now))
        #expect(
            !WebhookSignature.verify(
                header: five + String(repeating: ",", count: 500), body: body, secrets: [secret], now: now),
            "over 500 characters")
    }

    @Test("refused webhooks are logged once a minute per address, and counted every time")
    func refusalsLoggedOncePerMinute() {
        let clock = ManualInstant()
        let refusals = WebhookRefusals(now: { clock.now })
        let lines = LinesLogged()
        let logger = Logger(label: "test") { _ in lines }
        for _ in 0..<10 { refusals.refused(from: "203.0.113.9", provider: "simulated", logger: logger) }
        refusals.refused(from: "198.51.100.1", provider: "simulated", logger: logger)
        #expect(lines.count == 2, "one line per address")
        clock.advance(.seconds(61))
        refusals.refused(from: "203.0.113.9", provider: "simulated", logger: logger)
        #expect(lines.count == 3, "and again after a minute")
    }

    @Test("signatures: HMAC-SHA256 over t.body, several v1, five minutes' tolerance")
    func signatureRules() {
        let body = Array(#"{"id":"evt"}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let header = WebhookSignature.header(body: body, secrets: ["whsec_a_secret_of_16+"], at: now)
        #expect(
            WebhookSignature.verify(
                header: header, body: body, secrets: ["whsec_a_secret_of_16+"], now: now.addingTimeInterval(299)))
        #expect(
            !WebhookSignature.verify(
                header: header, body: body, secrets: ["whsec_a_secret_of_16+"], now: now.addingTimeInterval(301)))
        #expect(
            !WebhookSignature.verify(header: header, body: body + [0x20], secrets: ["whsec_a_secret_of_16+"], now: now))
        #expect(!WebhookSignature.verify(header: header, body: body, secrets: ["whsec_another_secret__"], now: now))
        #expect(
            !WebhookSignature.verify(header: "t=1767225600", body: body, secrets: ["whsec_a_secret_of_16+"], now: now))
        #expect(!WebhookSignature.verify(header: "garbage", body: body, secrets: ["whsec_a_secret_of_16+"], now: now))
    }
}

/// A log handler that counts the lines written through it.
final class LinesLogged: LogHandler, @unchecked Sendable {  // the count is behind a lock
    private let lines = Mutex(0)
    var count: Int { lines.withLock { $0 } }
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { lines.withLock { $0 += 1 } }
}
