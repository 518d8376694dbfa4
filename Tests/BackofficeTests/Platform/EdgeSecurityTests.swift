import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The edge: authentication limits, hostile input, request ids")
struct EdgeSecurityTests {
    @Test(
        """
        30 bad tokens from one address: 401 with WWW-Authenticate up to the limit, then 429 with Retry-After; \
        other addresses unaffected
        """
    )
    func failedAuthenticationIsRateLimited() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.security.failedAuthenticationLimit
            #expect(limit < 30)
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                let attacker = ["X-Forwarded-For": "203.0.113.7"]
                var statuses: [Int] = []
                for attempt in 0..<30 {
                    let reply = try await client.call(
                        .get, "/v1/customers", token: "bo_guess\(attempt)", headers: attacker)
                    statuses.append(reply.status)
                    if reply.status == 401 { #expect(reply.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true) }
                    if reply.status == 429 {
                        #expect(reply["code"] == "too_many_failed_authentications")
                        #expect(Int(reply.headers[.retryAfter] ?? "") ?? 0 >= 1)
                    }
                }
                #expect(statuses == Array(repeating: 401, count: limit) + Array(repeating: 429, count: 30 - limit))
                let manager = env.fixture.tokens[.backendManager]!
                let elsewhere = try await client.call(
                    .get, "/v1/customers", token: manager, headers: ["X-Forwarded-For": "198.51.100.2"])
                #expect(elsewhere.status == 200, "another address is not affected")
                let unknown = try await client.call(
                    .get, "/v1/customers", token: env.fixture.tokens[.auditor]!, headers: attacker)
                #expect(
                    unknown.status == 429,
                    "a token that has not authenticated lately is refused without a lookup, until the window passes")
                let metrics = try await client.call(.get, "/metrics", token: nil)
                #expect(metrics.text.contains("backoffice_authentication_rate_limited_total"))
                #expect(metrics.text.contains("backoffice_authentication_failures_total"))
            }
        }
    }

    @Test(
        """
        a script's bad tokens never lock out the working credentials of its host: the app backend and the manager \
        keep their answers, the bad token gets 429
        """
    )
    func badScriptDoesNotLockOutTheHost() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.security.failedAuthenticationLimit
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                let host = ["X-Forwarded-For": "192.0.2.10"]
                let (app, manager) = (env.fixture.tokens[.appService]!, env.fixture.tokens[.backendManager]!)
                #expect(try await client.call(.get, "/v1/catalog", token: app, headers: host).status == 200)
                #expect(try await client.call(.get, "/v1/customers", token: manager, headers: host).status == 200)
                for attempt in 0..<(limit + 10) {
                    _ = try await client.call(
                        .get, "/v1/customers", token: "bo_wrong_script_token_\(attempt)", headers: host)
                }
                let bad = try await client.call(.get, "/v1/customers", token: "bo_wrong_script_token", headers: host)
                #expect(bad.status == 429, "the failing script is throttled")
                for _ in 0..<5 {
                    #expect(
                        try await client.call(.get, "/v1/catalog", token: app, headers: host).status == 200,
                        "the app backend still works")
                    #expect(
                        try await client.call(.get, "/v1/customers", token: manager, headers: host).status == 200,
                        "and so does the manager")
                }
                #expect(
                    try await client.call(
                        .post, "/v1/customers", token: app,
                        json:
                            #"""
                            {"id":"\#(UUID().uuidString.lowercased())","email":"host@example.com",\#
                            "display_name":"H"}
                            """#,
                        headers: host
                    ).status == 201, "changes too")
            }
        }
    }

    @Test("X-Forwarded-For is believed only from a trusted proxy; the address is what the audit event records")
    func forwardedForOnlyFromTrustedProxies() async throws {
        try await TestEnvironment.with { env in
            let first = try await env.customer()
            let second = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let lock = #"{"reason":"Suspected account takeover"}"#
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.0/8")]) { client in
                let reply = try await client.call(
                    .post, "/v1/customers/\(first.id.uuidString.lowercased())/lock", token: manager, json: lock,
                    headers: ["X-Forwarded-For": "198.51.100.9, 127.0.0.2"])
                #expect(reply.status == 200)
            }
            try await env.withApp(trustedProxies: [try CIDR("10.0.0.0/8")]) { client in
                let reply = try await client.call(
                    .post, "/v1/customers/\(second.id.uuidString.lowercased())/lock", token: manager, json: lock,
                    headers: ["X-Forwarded-For": "198.51.100.9"])
                #expect(reply.status == 200)
            }
            let trusted = try await env.ownerScalar(
                """
                SELECT source_ip FROM audit_events WHERE action = 'accounts.lock' AND target_id = \
                '\(first.id.uuidString.lowercased())'
                """,
                as: String.self)
            let untrusted = try await env.ownerScalar(
                """
                SELECT source_ip FROM audit_events WHERE action = 'accounts.lock' AND target_id = \
                '\(second.id.uuidString.lowercased())'
                """,
                as: String.self)
            #expect(trusted == "198.51.100.9", "the nearest untrusted hop behind trusted proxies")
            #expect(untrusted == "127.0.0.1", "a peer that is not a trusted proxy cannot choose its address")
        }
    }

    @Test("a NUL in a query parameter or a JSON string is 422 naming the field, and changes nothing")
    func nulIsRefused() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let account = {
                    try await env.ownerScalar(
                        """
                        SELECT status || ' v' || version FROM customers WHERE id = \
                        '\(customer.id.uuidString.lowercased())'
                        """,
                        as: String.self)
                }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
                let (accountBefore, eventsBefore) = (try await account(), try await events())
                let query = try await client.call(.get, "/v1/customers?email_prefix=a%00b", token: manager)
                #expect(query.status == 422)
                #expect(query["code"] == "validation_failed")
                #expect(query.text.contains("\"field\":\"email_prefix\""))
                let body = try await client.call(
                    .post, "/v1/customers/\(customer.id.uuidString.lowercased())/lock", token: manager,
                    json: #"{"reason":"a\u0000b"}"#)
                #expect(body.status == 422)
                #expect(body.text.contains("\"field\":\"reason\""))
                #expect(try await account() == accountBefore, "the account's status and version are unchanged")
                #expect(try await events() == eventsBefore, "nothing audited")
                let escaped = try await client.call(
                    .post, "/v1/customers/\(customer.id.uuidString.lowercased())/lock", token: manager,
                    json: #"{"reason":"a backslash \\u0000 is text"}"#)
                #expect(escaped.status == 200, "an escaped backslash before u0000 is not a NUL")
            }
            let locks = try await env.ownerScalar(
                "SELECT count(*) FROM account_locks WHERE customer_id = '\(customer.id.uuidString.lowercased())'",
                as: Int.self)
            #expect(locks == 1, "only the valid request changed anything")
        }
    }

    @Test("a value the service accepts never fails a database CHECK: lengths count Unicode scalars in both")
    func lengthsAgreeWithTheDatabase() async throws {
        try await TestEnvironment.with { env in
            let appService = env.fixture.tokens[.appService]!
            // 150 user-perceived characters, 300 Unicode scalars (e + combining acute accent).
            let name = String(repeating: "e\u{301}", count: 150)
            #expect(name.count == 150 && name.unicodeScalars.count == 300)
            try await env.withApp { client in
                let id = UUID().uuidString.lowercased()
                let reply = try await client.call(
                    .post, "/v1/customers", token: appService,
                    json: #"{"id":"\#(id)","email":"x@example.com","display_name":"\#(name)"}"#)
                #expect(reply.status == 422)
                #expect(reply.text.contains("\"field\":\"display_name\""))
                #expect(reply.text.contains("too_long"))
            }
        }
    }

    @Test(
        """
        a body is read only from a caller that may send it: no token, or a bulk upload whose token does not \
        authenticate, is 401 before the body
        """
    )
    func bodiesAfterAuthentication() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp(trustedProxies: []) { client in
                let port = try #require(client.port)
                let unknown = TokenSecret.generate().value
                for (path, authorization, length) in [
                    ("/v1/goods/import", "Authorization: Bearer \(unknown)\r\n", 30_000_000),
                    ("/v1/customers", "", 500_000),
                ] {
                    // Headers announcing a large body, and no body: a server that reads it first never answers.
                    let head =
                        """
                        POST \(path) HTTP/1.1\r\nHost: localhost\r\n\(authorization)Content-Type: \
                        text/csv\r\nContent-Length: \(length)\r\n\r\n
                        """
                    let request = Array(head.utf8)
                    let answer = try await offThePool { try rawHTTP(port: port, request, timeout: 10) }
                    #expect(answer.hasPrefix("HTTP/1.1 401"), "\(path): \(answer.prefix(200))")
                    #expect(answer.contains("unauthenticated"))
                }
            }
        }
    }

    @Test("a chunked body over the limit is 413 problem+json, like a declared one")
    func chunkedBodyOverTheLimit() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.withApp(trustedProxies: []) { client in
                let port = try #require(client.port)
                var request = Array(
                    """
                    POST /v1/customers/\(customer.id.uuidString.lowercased())/lock HTTP/1.1\r
                    Host: localhost\r
                    Authorization: Bearer \(env.fixture.tokens[.backendManager]!)\r
                    Content-Type: application/json\r
                    Transfer-Encoding: chunked\r
                    \r

                    """.utf8)
                let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 64 * 1024)
                for _ in 0..<20 {
                    request += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
                }
                request += Array("0\r\n\r\n".utf8)
                let whole = request
                let answer = try await offThePool { try rawHTTP(port: port, whole) }
                #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
                #expect(answer.contains("payload_too_large"))
            }
        }
    }

    @Test("an X-Request-Id outside [A-Za-z0-9._:-] or over 128 characters is replaced, not stored")
    func hostileRequestIDsAreReplaced() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let good = try await client.call(
                    .get, "/v1/customers", token: manager, headers: ["X-Request-Id": "ops-script:run.42_a"])
                #expect(good.headers[.xRequestIDName] == "ops-script:run.42_a")
                for hostile in [
                    "<script>alert(1)</script>", "a b", String(repeating: "a", count: 129), "id;DROP TABLE x",
                ] {
                    let reply = try await client.call(
                        .get, "/v1/customers", token: manager, headers: ["X-Request-Id": hostile])
                    #expect(reply.status == 200)
                    #expect(reply.headers[.xRequestIDName] != hostile)
                    #expect(UUID(uuidString: reply.headers[.xRequestIDName] ?? "") != nil, "replaced by a generated id")
                }
            }
        }
    }
}

extension HTTPField.Name {
    static let xRequestIDName = Self("X-Request-Id")!
}
