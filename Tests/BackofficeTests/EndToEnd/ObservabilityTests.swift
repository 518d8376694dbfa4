import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// One HTTP exchange with a live server: status and body.
func fetch(
    _ url: String, method: HTTPMethod = .GET, token: String? = nil, json: String? = nil,
    headers: [(String, String)] = []
) async throws -> (
    status: Int, body: String
) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let json {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
    }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 1 << 22)
    return (Int(response.status.code), String(buffer: body))
}

@Suite("End to end: logs and metrics of the built executable")
struct ObservabilityTests {
    @Test(
        """
        LOG_FORMAT=json writes one JSON object per line, a line per request with its id, actor, token, path, \
        status and duration; no token, password, webhook secret or customer email is in a whole run's logs; \
        /metrics on its own port carries the service's series
        """
    )
    func jsonLogsWithoutSecretsAndMetrics() async throws {
        try await TestEnvironment.with { env in
            let webhookSecret = "whsec_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            let email = "private.person.\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let wrongToken = "bo_" + String(repeating: "w", count: 43)
            let admin = env.fixture.tokens[.platformAdmin]!
            let app = env.fixture.tokens[.appService]!
            var secrets = [admin, app, wrongToken, webhookSecret, email]
            if let password = URLComponents(string: env.appURL.connectionString)?.password { secrets.append(password) }
            let metricsPort = try freePort()
            try await withServer(
                env, arguments: ["--metrics-port", String(metricsPort)],
                environment: [
                    "LOG_FORMAT": "json", "LOG_LEVEL": "debug",
                    "BACKOFFICE_WEBHOOK_SECRETS": "simulated=\(webhookSecret)",
                ]
            ) { base in
                let customer = UUID().uuidString.lowercased()
                let synced = try await fetch(
                    base + "/v1/customers", method: .POST, token: app,
                    json: #"{"id":"\#(customer)","email":"\#(email)","display_name":"Private Person"}"#)
                #expect(synced.status == 201 || synced.status == 200, "\(synced.body)")
                #expect(
                    try await fetch(base + "/v1/customers?email_prefix=\(email.prefix(12))", token: admin).status == 200
                )
                #expect(try await fetch(base + "/v1/customers", token: wrongToken).status == 401)
                let manager = try #require(env.fixture.principals[.backendManager]?.operatorID).uuidString.lowercased()
                let mint = #"{"operator_id":"\#(manager)","name":"laptop"}"#
                let key = [("Idempotency-Key", "mint-\(UUID().uuidString)")]
                let minted = try await fetch(base + "/v1/tokens", method: .POST, token: admin, json: mint, headers: key)
                #expect(minted.status == 201, "\(minted.body)")
                let created = try JSONSerialization.jsonObject(with: Data(minted.body.utf8)) as? [String: Any]
                secrets.append(try #require(created?["secret"] as? String))
                #expect(
                    try await fetch(base + "/v1/tokens", method: .POST, token: admin, json: mint, headers: key).status
                        == 201, "replayed")
                let webhook = try await fetch(
                    base + "/v1/payments/webhooks/simulated", method: .POST,
                    json: #"{"id":"evt_1","type":"payment_intent.succeeded"}"#,
                    headers: [("Provider-Signature", "t=1,v1=00")])
                #expect(webhook.status >= 400, "an unsigned webhook is refused")
                #expect(try await fetch(base + "/metrics").status == 404, "metrics are served on their own port only")

                let metrics = try await fetch("http://127.0.0.1:\(metricsPort)/metrics")
                #expect(metrics.status == 200)
                for series in [
                    "backoffice_pool_connections_in_use", "backoffice_pool_waiting", "backoffice_audit_appends_total",
                    "backoffice_idempotent_replays_total 1", "backoffice_authentication_failures_total 1",
                    #"backoffice_http_responses_total{class="4xx"}"#,
                    // The account list is answered before the router (HandEncodedLists), and counted under its route
                    // all the same.
                    #"""
                    hb_requests{http_route="/v1/customers",http_request_method="GET",\#
                    http_response_status_code="200"} 1
                    """#,
                ] {
                    #expect(metrics.body.contains(series), "\(series) in /metrics")
                }
            } stopped: { output in
                let lines = output.split(separator: "\n").filter { !$0.hasPrefix("listening on ") }
                #expect(lines.count > 5)
                let objects = lines.compactMap(jsonObject)
                #expect(objects.count == lines.count, "every line is one JSON object")
                #expect(objects.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
                let requests = objects.filter { $0["message"] as? String == "request" }
                #expect(requests.count >= 7)
                #expect(
                    requests.allSatisfy {
                        ($0["request_id"] as? String)?.isEmpty == false && $0["status"] != nil
                            && $0["duration_ms"] != nil
                    })
                let minting = try #require(requests.first { $0["path"] as? String == "/v1/tokens" })
                #expect(
                    minting["actor"] as? String
                        == env.fixture.principals[.platformAdmin]?.operatorID?.uuidString.lowercased())
                #expect(
                    minting["token_id"] as? String
                        == env.fixture.principals[.platformAdmin]?.tokenID?.uuidString.lowercased())
                #expect(requests.contains { $0["status"] as? String == "401" && $0["actor"] == nil })
                for secret in secrets {
                    #expect(!output.contains(secret), "a secret or an email in the logs: \(secret.prefix(6))…")
                }
            }
        }
    }
}

/// A log line as a JSON object (nil when it is not one).
private func jsonObject(_ line: Substring) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
private func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestSetupError(description: "socket") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw TestSetupError(description: "bind") }
    return Int(UInt16(bigEndian: address.sin_port))
}
