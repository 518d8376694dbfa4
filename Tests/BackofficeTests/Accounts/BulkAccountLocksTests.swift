import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Accounts: a manager locks up to 500 at once with one reason, with a dry run")
struct BulkAccountLocksTests {
    static func body(_ ids: [UUID], reason: String? = "Card-testing ring", dryRun: Bool = false) -> String {
        let reasonField = reason.map { #", "reason": "\#($0)""# } ?? ""
        let list = ids.map { "\"\($0.text)\"" }.joined(separator: ", ")
        return #"{"dry_run": \#(dryRun)\#(reasonField), "customer_ids": [\#(list)]}"#
    }

    @Test(
        """
        a dry run says what each account's lock would do and changes nothing; then the accounts are locked with \
        the one reason, each its own audited lock; one locked already and an unknown id are refused alone; a \
        missing reason or a past end changes nothing; a partner may not
        """
    )
    func lockSelected() async throws {
        try await TestEnvironment.with { env in
            var made: [UUID] = []
            for _ in 0..<10 { made.append(try await env.customer().id) }
            let ids = made
            _ = try await env.database.run(
                TransitionAccount(customerID: ids[9], move: .lock, reason: "earlier"),
                context: env.context(.backendManager))
            let unknown = UUID()
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let path = "/v1/customers/bulk-lock"
                let dry = try await client.call(
                    .post, path, token: manager, json: Self.body(ids + [unknown], dryRun: true))
                #expect(dry.status == 200, "\(dry.text)")
                #expect(
                    BulkGoodsArchiveTests.outcomes(dry)
                        == Array(repeating: "would_do locked", count: 9) + [
                            "refused invalid_transition", "refused not_found",
                        ])
                #expect(try await env.auditCount("accounts.lock") == 1, "a dry run changes nothing")

                let blank = try await client.call(.post, path, token: manager, json: Self.body(ids, reason: " "))
                #expect(blank.status == 422 && blank.text.contains("reason"))
                let none = try await client.call(.post, path, token: manager, json: Self.body(ids, reason: nil))
                #expect(none.status == 422)
                let past = try await client.call(
                    .post, path, token: manager,
                    json: #"{"reason": "r", "until": "2020-01-01T00:00:00Z", "customer_ids": ["\#(ids[0].text)"]}"#)
                #expect(past.status == 422 && past.text.contains("in_the_past"), "\(past.text)")
                #expect(try await env.auditCount("accounts.lock") == 1)

                let done = try await client.call(.post, path, token: manager, json: Self.body(ids + [unknown]))
                #expect(done.json["done"] as? Int == 9 && done.json["refused"] as? Int == 2, "\(done.text)")
                #expect(try await env.auditCount("accounts.lock") == 10)
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM account_locks WHERE reason = 'Card-testing ring'
                            AND customer_id = ANY('{\(ids.map(\.text).joined(separator: ","))}'::uuid[])
                        """, as: Int64.self) == 9)
                let partner = env.fixture.partners[0].adminToken
                #expect(try await client.call(.post, path, token: partner, json: Self.body(ids)).status == 403)
            }
        }
    }

    @Test("30 bulks of the same 10 accounts at once lock each once")
    func thirtyAtOnce() async throws {
        try await TestEnvironment.with { env in
            var made: [UUID] = []
            for _ in 0..<10 { made.append(try await env.customer().id) }
            let ids = made
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await client.call(
                                .post, "/v1/customers/bulk-lock", token: manager, json: Self.body(ids))
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
                #expect(replies.compactMap { $0.json["done"] as? Int }.reduce(0, +) == 10)
                #expect(try await env.auditCount("accounts.lock") == 10)
            }
        }
    }

    @Test(
        """
        the console: a manager ticks accounts on the list and locks them with one reason, checked first (the \
        reason carried to the confirmation); without a reason nothing is locked and the page says why
        """)
    func consoleBulkLock() async throws {
        try await TestEnvironment.with { env in
            var made: [UUID] = []
            for _ in 0..<2 { made.append(try await env.customer().id) }
            let ids = made
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let list = try await manager.get("/console/accounts")
                #expect(list.text.contains(#"name="customer_\#(ids[0].text)" value="yes""#))
                let ticked = ["customer_\(ids[0].text)": "yes", "customer_\(ids[1].text)": "yes"]
                let none = try await manager.post(
                    "/console/accounts/bulk-lock", ticked.merging(["dry_run": "yes"]) { a, _ in a }, csrf: list.csrf)
                #expect(none.status == 422 && none.text.contains("Reason:"), "\(none.text)")
                let check = try await manager.post(
                    "/console/accounts/bulk-lock",
                    ticked.merging(["dry_run": "yes", "reason": "Card-testing ring"]) { a, _ in a }, csrf: list.csrf)
                #expect(check.text.contains("2 would be locked, 0 refused."), "\(check.text)")
                #expect(check.text.contains(#"<input type="hidden" name="reason" value="Card-testing ring">"#))
                #expect(try await env.auditCount("accounts.lock") == 0)
                let done = try await manager.post(
                    "/console/accounts/bulk-lock",
                    ticked.merging(["dry_run": "no", "reason": "Card-testing ring"]) { a, _ in a }, csrf: check.csrf)
                #expect(done.text.contains("2 locked, 0 refused."), "\(done.text)")
                #expect(try await env.auditCount("accounts.lock") == 2)
            }
        }
    }
}
