import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Accounts: a manager sends up to 500 accounts one notice with one reason; the app reads it")
struct BulkAccountNoticesTests {
    static let path = "/v1/customers/bulk-message"

    static func body(
        _ ids: [UUID], subject: String? = "Your order is delayed", text: String? = "We are sorry.\nIt ships Monday.",
        reason: String? = "Warehouse outage", dryRun: Bool = false
    ) throws -> String {
        var document: [String: Any] = ["customer_ids": ids.map(\.text), "dry_run": dryRun]
        document["subject"] = subject
        document["body"] = text
        document["reason"] = reason
        return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
    }

    /// Ten accounts: nine active, the tenth deleted.
    static func accounts(_ env: TestEnvironment) async throws -> [UUID] {
        var made: [UUID] = []
        for _ in 0..<10 { made.append(try await env.customer().id) }
        _ = try await env.database.run(
            TransitionAccount(customerID: made[9], move: .delete, reason: "closed"),
            context: env.context(.backendManager))
        return made
    }

    @Test(
        """
        a dry run says whom the notice would reach and sends nothing; bad text or no reason sends nothing; then each \
        account gets the notice, its own audited change (the reason, not the body), a deleted or unknown one refused \
        alone; the same bulk again under its Idempotency-Key sends nobody a second; the app reads the notices
        """
    )
    func messageSelected() async throws {
        try await TestEnvironment.with { env in
            let ids = try await Self.accounts(env)
            let unknown = UUID()
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let dry = try await client.call(
                    .post, Self.path, token: manager, json: try Self.body(ids + [unknown], dryRun: true))
                #expect(dry.status == 200, "\(dry.text)")
                #expect(
                    BulkGoodsArchiveTests.outcomes(dry)
                        == Array(repeating: "would_do active", count: 9) + [
                            "refused invalid_transition", "refused not_found",
                        ])
                for (bad, field) in [
                    (try Self.body(ids, subject: nil), "subject"),
                    (try Self.body(ids, subject: "Two\nlines"), "subject"),
                    (try Self.body(ids, subject: "Bell\u{7}"), "subject"), (try Self.body(ids, text: " "), "body"),
                    (try Self.body(ids, text: "Escape \u{1B}[2J"), "body"), (try Self.body(ids, reason: nil), "reason"),
                    (try Self.body(ids, subject: String(repeating: "é", count: 201)), "subject"),
                    (try Self.body(ids, subject: "Line\u{2028}separated"), "subject"),
                    (try Self.body(ids, text: "Reordered \u{202E}txet"), "body"),
                ] {
                    let refused = try await client.call(.post, Self.path, token: manager, json: bad)
                    #expect(refused.status == 422 && refused.text.contains(#""field":"\#(field)""#), "\(refused.text)")
                }
                #expect(try await env.auditCount("accounts.message") == 0, "neither a dry run nor a refusal sends")

                let key = ["Idempotency-Key": "notice-\(UUID().text)"]
                let sent = try await client.call(
                    .post, Self.path, token: manager, json: try Self.body(ids + [unknown]), headers: key)
                #expect(sent.json["done"] as? Int == 9 && sent.json["refused"] as? Int == 2, "\(sent.text)")
                #expect(try await env.auditCount("accounts.message") == 9)
                let audited =
                    try await env.ownerScalar(
                        """
                        SELECT reason || '|' || after::text FROM audit_events
                        WHERE action = 'accounts.message' LIMIT 1
                        """,
                        as: String.self) ?? ""
                #expect(audited.hasPrefix("Warehouse outage|") && audited.contains("Your order is delayed"))
                #expect(!audited.contains("ships Monday"), "the body is not in the audit log")

                let again = try await client.call(
                    .post, Self.path, token: manager, json: try Self.body(ids + [unknown]), headers: key)
                #expect(
                    BulkGoodsArchiveTests.outcomes(again)
                        == Array(repeating: "refused sent_already", count: 9) + [
                            "refused invalid_transition", "refused not_found",
                        ], "\(again.text)")
                #expect(try await env.auditCount("accounts.message") == 9)
                let checkAgain = try await client.call(
                    .post, Self.path, token: manager, json: try Self.body([ids[0]], dryRun: true), headers: key)
                #expect(BulkGoodsArchiveTests.outcomes(checkAgain) == ["refused sent_already"], "\(checkAgain.text)")
                let otherText = try await client.call(
                    .post, Self.path, token: manager, json: try Self.body([ids[0]], subject: "Another"), headers: key)
                #expect(
                    BulkGoodsArchiveTests.outcomes(otherText) == ["refused idempotency_key_reused"], "\(otherText.text)"
                )
                #expect(try await env.auditCount("accounts.message") == 9)

                let app = env.fixture.tokens[.appService]!
                let read = try await client.call(.get, "/v1/customers/\(ids[0].text)/notices", token: app)
                let items = read.json["items"] as? [[String: Any]] ?? []
                #expect(
                    items.count == 1 && items.first?["subject"] as? String == "Your order is delayed", "\(read.text)")
                #expect(items.first?["body"] as? String == "We are sorry.\nIt ships Monday.")
                #expect(items.first?["reason"] == nil, "the reason is the company's")
                let other = try await env.customer().id
                let none = try await client.call(.get, "/v1/customers/\(other.text)/notices", token: app)
                #expect((none.json["items"] as? [Any])?.isEmpty == true, "\(none.text)")
                let missing = try await client.call(.get, "/v1/customers/\(unknown.text)/notices", token: app)
                #expect(missing.status == 404)

                let partner = env.fixture.partners[0].adminToken
                #expect(try await client.call(.post, Self.path, token: partner, json: try Self.body(ids)).status == 403)
                #expect(
                    try await client.call(.get, "/v1/customers/\(ids[0].text)/notices", token: partner).status == 403)
            }
        }
    }

    @Test("30 bulks of the same 10 accounts at once, under one Idempotency-Key, send each account one notice")
    func thirtyAtOnce() async throws {
        try await TestEnvironment.with { env in
            var made: [UUID] = []
            for _ in 0..<10 { made.append(try await env.customer().id) }
            let ids = made
            let manager = env.fixture.tokens[.backendManager]!
            let key = ["Idempotency-Key": "notice-\(UUID().text)"]
            try await env.withApp { client in
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await client.call(
                                .post, Self.path, token: manager, json: try Self.body(ids), headers: key)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
                #expect(replies.compactMap { $0.json["done"] as? Int }.reduce(0, +) == 10)
                #expect(try await env.auditCount("accounts.message") == 10)
                #expect(try await env.ownerScalar("SELECT count(*) FROM account_notices", as: Int.self) == 10)
            }
        }
    }

    @Test(
        """
        the console: a manager ticks accounts on the list and sends them a notice with one reason, checked first \
        (the subject, body and reason carried to the confirmation); without a subject nothing is sent
        """)
    func consoleBulkMessage() async throws {
        try await TestEnvironment.with { env in
            var made: [UUID] = []
            for _ in 0..<2 { made.append(try await env.customer().id) }
            let ids = made
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let list = try await manager.get("/console/accounts")
                #expect(list.text.contains(#"formaction="/console/accounts/bulk-message""#))
                let key = try #require(
                    list.text.firstRange(of: #"name="notice_key" value=""#).map {
                        String(list.text[$0.upperBound...].prefix(36))
                    })
                let form = [
                    "customer_\(ids[0].text)": "yes", "customer_\(ids[1].text)": "yes", "reason": "Warehouse outage",
                    "body": "We are sorry.", "notice_key": key,
                ]
                let none = try await manager.post(
                    "/console/accounts/bulk-message", form.merging(["dry_run": "yes"]) { a, _ in a }, csrf: list.csrf)
                #expect(none.status == 422 && none.text.contains("Subject:"), "\(none.text)")
                let withSubject = form.merging(["subject": "Delayed"]) { a, _ in a }
                let check = try await manager.post(
                    "/console/accounts/bulk-message", withSubject.merging(["dry_run": "yes"]) { a, _ in a },
                    csrf: list.csrf)
                #expect(check.text.contains("2 would be messaged, 0 refused."), "\(check.text)")
                #expect(check.text.contains(#"<input type="hidden" name="subject" value="Delayed">"#))
                #expect(try await env.auditCount("accounts.message") == 0)
                let done = try await manager.post(
                    "/console/accounts/bulk-message", withSubject.merging(["dry_run": "no"]) { a, _ in a },
                    csrf: check.csrf)
                #expect(done.text.contains("2 messaged, 0 refused."), "\(done.text)")
                #expect(try await env.auditCount("accounts.message") == 2)
                // The confirmation sent twice (a double click): the list's key sends nobody the notice twice.
                let twice = try await manager.post(
                    "/console/accounts/bulk-message", withSubject.merging(["dry_run": "no"]) { a, _ in a },
                    csrf: check.csrf)
                #expect(twice.text.contains("0 messaged, 2 refused."), "\(twice.text)")
                #expect(try await env.auditCount("accounts.message") == 2)
            }
        }
    }
}
