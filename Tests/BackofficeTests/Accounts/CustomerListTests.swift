import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension AccountsAPITests {
    @Test("the list is keyset-paginated, filters by status and email prefix, and masks PII for auditors")
    func listing() async throws {
        try await TestEnvironment.with { env in
            for index in 0..<7 { _ = try await env.customer("page\(index)@example.com") }
            _ = try await env.customer("other@example.com")
            try await env.withApp { client in
                var seen: [String] = []
                var cursor: String?
                repeat {
                    let uri = "/v1/customers?email_prefix=page&limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                    let page = try await client.call(.get, uri, token: env.fixture.tokens[.backendManager]!)
                    seen += (page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["email"] as? String }
                    cursor = page.json["next_cursor"] as? String
                } while cursor != nil
                #expect(seen == (0..<7).map { "page\($0)@example.com" })
                let masked = try await client.call(
                    .get, "/v1/customers?limit=500", token: env.fixture.tokens[.auditor]!)
                let maskedEmails = (masked.json["items"] as? [[String: Any]] ?? []).compactMap {
                    $0["email"] as? String
                }
                #expect(maskedEmails.contains("p***@example.com") && maskedEmails.contains("o***@example.com"))
                #expect(!maskedEmails.contains { $0.hasPrefix("page") }, "an auditor sees emails masked")
                let probe = try await client.call(
                    .get, "/v1/customers?email_prefix=pa&limit=1", token: env.fixture.tokens[.auditor]!)
                #expect(probe.status == 403)
                #expect(probe["code"] == "pii_masked", "a masked field cannot be recovered by filtering on it")
                let badCursor = try await client.call(
                    .get, "/v1/customers?cursor=garbage", token: env.fixture.tokens[.backendManager]!)
                #expect(badCursor.status == 400)
                let badLimit = try await client.call(
                    .get, "/v1/customers?limit=501", token: env.fixture.tokens[.backendManager]!)
                #expect(badLimit.status == 422)
            }
        }
    }
}

@Suite("Hand-encoded account list")
struct CustomerListEncodingTests {
    @Test(
        "the fast path writes exactly the bytes of the generated encoder",
        arguments: [
            "/v1/customers?limit=5", "/v1/customers?status=locked", "/v1/customers?include_deleted=true&limit=500",
        ])
    func sameBytes(uri: String) async throws {
        try await TestEnvironment.with { env in
            _ = try await env.customer("plain@example.com")
            let oddName = "Zoë \"Q\" \\ O'Neil\u{1}\u{1F}\u{7F}/ 東京 \u{2028}\u{2029} 😀 </script>"
            let odd = try await env.database.run(
                SyncCustomer(id: UUID(), email: "odd@example.com", displayName: oddName),
                context: env.context(.appService)
            ).0
            let timed = try await env.customer("timed@example.com")
            _ = try await env.database.run(
                TransitionAccount(
                    customerID: odd.id, move: .lock, reason: "line\nbreak\ttab",
                    until: Date().addingTimeInterval(3600)),
                context: env.context(.backendManager))
            for _ in 1...3 {
                _ = try await env.database.run(
                    ReportLoginAttempt(customerID: timed.id, succeeded: false), context: env.context(.appService))
            }
            _ = try await RenewalTests.activeSubscriptions(env)
            let gone = try await env.customer("gone@example.com")
            _ = try await env.database.run(
                TransitionAccount(customerID: gone.id, move: .delete, reason: "bye"),
                context: env.context(.backendManager))
            for role in [Role.backendManager, .auditor] {
                let token = env.fixture.tokens[role]!
                let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
                let reference = try await env.withApp(handEncodedLists: false) {
                    try await $0.call(.get, uri, token: token)
                }
                #expect(fast.status == 200)
                #expect(fast.text == reference.text, "\(role.rawValue) \(uri)")
            }
        }
    }

    @Test(
        "the fast path refuses bad requests exactly as the generated path does",
        arguments: [
            ("/v1/customers?limit=0", Role.backendManager), ("/v1/customers?limit=x", .backendManager),
            ("/v1/customers?status=gone", .backendManager),
            ("/v1/customers?cursor=not-a-cursor", .backendManager),
            ("/v1/customers?include_deleted=maybe", .backendManager),
            ("/v1/customers?email_prefix=a", .auditor), ("/v1/customers", .appService),
        ])
    func sameErrors(uri: String, role: Role) async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[role]!
            let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
            let reference = try await env.withApp(handEncodedLists: false) {
                try await $0.call(.get, uri, token: token)
            }
            #expect(fast.status >= 400 && fast.status < 500)
            #expect(fast.status == reference.status, "\(uri)")
            #expect(fast["code"] == reference["code"], "\(uri)")
        }
    }

    @Test("RFC 3339 formatting matches Foundation's (milliseconds, UTC)")
    func dates() throws {
        for seconds in [0.0, 1_700_000_000.5, 1_795_000_000.75, 951_782_400.25, 4_102_444_799.875] {
            let date = Date(timeIntervalSince1970: seconds)
            let expected = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            #expect(RFC3339DateTranscoder.format(date) == expected, "\(seconds)")
        }
        // A time read from text prints as it was written, whatever its binary representation.
        for millis in 0..<1000 {
            let text = String(format: "2026-12-23T08:48:34.%03dZ", millis)
            #expect(RFC3339DateTranscoder.format(try RFC3339DateTranscoder().decode(text)) == text)
        }
    }
}
