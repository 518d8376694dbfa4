import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Idempotency-Key")
struct IdempotencyTests {
    @Test("replaying a POST with the same key returns the identical response and changes once; another body is 409")
    func replay() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let token = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let first = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"once"}"#,
                    headers: ["Idempotency-Key": "lock-1"])
                let second = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"once"}"#,
                    headers: ["Idempotency-Key": "lock-1"])
                #expect(first.status == 200)
                #expect(second.status == 200)
                #expect(second.text == first.text, "byte-identical body")
                #expect(second.headers[.init("ETag")!] == first.headers[.init("ETag")!])
                let other = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"different"}"#,
                    headers: ["Idempotency-Key": "lock-1"]
                )
                #expect(other.status == 409)
                #expect(other["code"] == "idempotency_key_reused")
                // The key is scoped to the principal: another manager's same key is a new request.
                let admin = try await client.call(
                    .post, "/v1/customers/\(customer.id)/unlock", token: env.fixture.tokens[.platformAdmin]!,
                    json: #"{"reason":"x"}"#,
                    headers: ["Idempotency-Key": "lock-1"])
                #expect(admin.status == 200)
            }
            let locks = try await env.ownerScalar(
                """
                SELECT count(*) FROM audit_events WHERE action = 'accounts.lock' AND target_id = \
                '\(customer.id.uuidString.lowercased())'
                """,
                as: Int.self)
            #expect(locks == 1)
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM account_locks WHERE customer_id = '\(customer.id)'", as: Int.self) == 1)
        }
    }

    @Test("a key older than policies/retention.yaml's keep_hours is forgotten: the same key is a new request")
    func expiredKeys() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let token = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let lock = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"first"}"#,
                    headers: ["Idempotency-Key": "k"])
                #expect(lock.status == 200)
                let hours = env.policies.retention.idempotencyKeepHours
                env.clock.advance(by: Double(hours) * 3600 + 1)
                let unlock = try await client.call(
                    .post, "/v1/customers/\(customer.id)/unlock", token: token, json: #"{"reason":"later"}"#,
                    headers: ["Idempotency-Key": "k"])
                #expect(unlock.status == 200, "an expired key with another request is not idempotency_key_reused")
                #expect(unlock["status"] == "active")
                let relock = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"first"}"#,
                    headers: ["Idempotency-Key": "k"])
                #expect(
                    relock.status == 409, "the stored reply is now the unlock's: the lock body with that key is a reuse"
                )
                #expect(relock["code"] == "idempotency_key_reused")
            }
            let events = try await env.ownerScalar(
                """
                SELECT count(*) FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND \
                action IN ('accounts.lock', 'accounts.unlock')
                """,
                as: Int.self)
            #expect(events == 2)
        }
    }

    @Test("concurrent requests with one key change once and answer alike")
    func concurrent() async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[.appService]!
            let id = UUID()
            try await env.withApp { client in
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<6 {
                        group.addTask {
                            try await client.call(
                                .post, "/v1/customers", token: token,
                                json: #"{"id":"\#(id)","email":"same@example.com","display_name":"Same"}"#,
                                headers: ["Idempotency-Key": "sync-1"])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(replies.map(\.status)) == [201])
                #expect(Set(replies.map(\.text)).count == 1)
            }
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'accounts.sync' AND target_id = \
                    '\(id.uuidString.lowercased())'
                    """,
                    as: Int.self)
                    == 1)
        }
    }

    @Test(
        """
        a key whose record answers another path (held for approval, where this one makes the change) is \
        named as such with its status, and the change is not made again
        """)
    func otherPath() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let idempotency = Idempotency(database: env.database)
            let call = IdempotentCall(
                key: "twin", request: ["reason": "once"], operationID: "lockCustomer",
                context: env.context(.backendManager))
            let lock = TransitionAccount(customerID: customer.id, move: .lock, reason: "once")
            let held = try await idempotency.run(lock, call) { _ in StoredResponse(status: 202, body: ["id": "r"]) }
            #expect(held.status == 202)
            do {
                _ = try await idempotency.run(lock, call) { _ in StoredResponse(status: 200, body: 1) }
                Issue.record("a record of another shape was replayed")
            } catch let error as KeyAnsweredOtherPath {
                #expect(error.status == 202 && error.failure.contains("typeMismatch"), "\(error)")
            }
            #expect(try await idempotency.recordedStatus(call) == 202, "the record decides the path")
            #expect(try await env.auditCount("accounts.lock") == 1)
        }
    }
}
