import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Accounts over HTTP")
struct AccountsAPITests {
    @Test("a manager's lock is audited with actor, reason, request id and before/after; unlock lifts it")
    func lockAndUnlock() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.principals[.backendManager]!
            let token = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let locked = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token,
                    json: #"{"reason":"Chargeback under investigation"}"#,
                    headers: ["X-Request-Id": "req-lock-1"])
                #expect(locked.status == 200)
                #expect(locked["status"] == "locked")
                #expect(locked.headers[.init("ETag")!] == "\"2\"")
                #expect(locked.headers[.init("X-Request-Id")!] == "req-lock-1")
                let lock = locked.json["lock"] as? [String: Any]
                #expect(lock?["cause"] as? String == "manual")
                #expect(lock?["locked_by"] as? String == manager.operatorID?.uuidString.lowercased())

                let history = try await client.call(.get, "/v1/customers/\(customer.id)/history", token: token)
                let events = history.json["items"] as? [[String: Any]] ?? []
                let lockEvent = try #require(events.first { $0["action"] as? String == "accounts.lock" })
                #expect(lockEvent["actor_id"] as? String == manager.operatorID?.uuidString.lowercased())
                #expect(lockEvent["actor_role"] as? String == "backend_manager")
                #expect(lockEvent["reason"] as? String == "Chargeback under investigation")
                #expect(lockEvent["request_id"] as? String == "req-lock-1")
                #expect((lockEvent["before"] as? [String: Any])?["status"] as? String == "active")
                #expect((lockEvent["after"] as? [String: Any])?["status"] as? String == "locked")
                #expect(lockEvent["policy_digest"] as? String == env.policies.digest)

                let unlocked = try await client.call(
                    .post, "/v1/customers/\(customer.id)/unlock", token: token, json: #"{"reason":"Resolved"}"#)
                #expect(unlocked.status == 200)
                #expect(unlocked["status"] == "active")
                #expect(unlocked.json["lock"] == nil)
                let lifted = try await env.ownerScalar(
                    "SELECT lifted_by::text FROM account_locks WHERE customer_id = '\(customer.id)'", as: String.self)
                #expect(lifted == manager.operatorID?.uuidString.lowercased())
            }
        }
    }

    @Test("a partner is refused with 403 and no token with 401, both problem+json, and nothing changes")
    func refusals() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let before = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
            let account = {
                try await env.ownerScalar(
                    "SELECT status || ' v' || version FROM customers WHERE id = '\(customer.id)'", as: String.self)
            }
            let accountBefore = try await account()
            try await env.withApp { client in
                let partner = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.partners[0].adminToken,
                    json: #"{"reason":"x"}"#)
                #expect(partner.status == 403)
                #expect(partner.headers[.contentType] == "application/problem+json")
                #expect(partner["code"] == "forbidden")
                let anonymous = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: nil, json: #"{"reason":"x"}"#)
                #expect(anonymous.status == 401)
                #expect(anonymous["code"] == "unauthenticated")
                #expect(anonymous.headers[.contentType] == "application/problem+json")
                let wrong = try await client.call(
                    .get, "/v1/customers", token: "bo_not-a-real-token-at-all-000000000000000000")
                #expect(wrong.status == 401)
            }
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self)
                    == "active")
            #expect(try await account() == accountBefore, "the account's status and version are unchanged")
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == before)
        }
    }

    @Test("no-ops are 409 invalid_transition with the current state, and not logged")
    func noOps() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let token = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let unlock = try await client.call(
                    .post, "/v1/customers/\(customer.id)/unlock", token: token, json: #"{"reason":"x"}"#)
                #expect(unlock.status == 409)
                #expect(unlock["code"] == "invalid_transition")
                #expect(unlock["current_state"] == "active")
                _ = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"x"}"#)
                let again = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"y"}"#)
                #expect(again.status == 409)
                #expect(again["current_state"] == "locked")
            }
            let locks = try await env.ownerScalar(
                """
                SELECT count(*) FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND \
                action = 'accounts.lock'
                """,
                as: Int.self)
            #expect(locks == 1)
        }
    }

    @Test(
        "bad input is rejected clearly and changes nothing",
        arguments: [
            (#"{}"#, 422, "validation_failed"),
            (#"{"reason":"   "}"#, 422, "validation_failed"),
            (#"{"reason":"x","extra":true}"#, 400, "malformed_request"),
            (#"{"reason":"#, 400, "malformed_request"),
            (#"{"reason":"x","until":"2001-01-01T00:00:00Z"}"#, 422, "validation_failed"),
        ])
    func badInput(body: String, status: Int, code: String) async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let account = {
                try await env.ownerScalar(
                    "SELECT status || ' v' || version FROM customers WHERE id = '\(customer.id)'", as: String.self)
            }
            let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
            let (accountBefore, eventsBefore) = (try await account(), try await events())
            try await env.withApp { client in
                let reply = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.tokens[.backendManager]!, json: body)
                #expect(reply.status == status)
                #expect(reply["code"] == code)
                #expect(!(reply.json["errors"] as? [Any] ?? []).isEmpty || code == "malformed_request")
                let bad = try await client.call(
                    .post, "/v1/customers/not-a-uuid/lock", token: env.fixture.tokens[.backendManager]!,
                    json: #"{"reason":"x"}"#)
                #expect(bad.status == 400)
            }
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self)
                    == "active")
            #expect(try await account() == accountBefore, "the account's status and version are unchanged")
            #expect(try await events() == eventsBefore, "nothing audited")
        }
    }

    @Test("If-Match with a stale version is 412 and changes nothing")
    func ifMatch() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.withApp { client in
                let account = {
                    try await env.ownerScalar(
                        "SELECT status || ' v' || version FROM customers WHERE id = '\(customer.id)'", as: String.self)
                }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
                let (accountBefore, eventsBefore) = (try await account(), try await events())
                let stale = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.tokens[.backendManager]!,
                    json: #"{"reason":"x"}"#,
                    headers: ["If-Match": "\"7\""])
                #expect(stale.status == 412)
                #expect(try await account() == accountBefore, "the account's status and version are unchanged")
                #expect(try await events() == eventsBefore, "nothing audited")
                let fresh = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.tokens[.backendManager]!,
                    json: #"{"reason":"x"}"#,
                    headers: ["If-Match": customer.etag])
                #expect(fresh.status == 200)
            }
        }
    }

    @Test("three failed logins lock the account (system actor); a password reset unlocks it")
    func failedLogins() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                for attempt in 1...2 {
                    let reply = try await client.call(
                        .post, "/v1/customers/\(customer.id)/login-attempts", token: app, json: #"{"succeeded":false}"#)
                    #expect(reply["status"] == "active")
                    #expect(reply["failed_logins"] == String(attempt))
                }
                let success = try await client.call(
                    .post, "/v1/customers/\(customer.id)/login-attempts", token: app, json: #"{"succeeded":true}"#)
                #expect(success["failed_logins"] == "0", "a success resets the count")
                for _ in 1...3 {
                    _ = try await client.call(
                        .post, "/v1/customers/\(customer.id)/login-attempts", token: app, json: #"{"succeeded":false}"#)
                }
                let shown = try await client.call(
                    .get, "/v1/customers/\(customer.id)", token: env.fixture.tokens[.backendManager]!)
                #expect(shown["status"] == "locked")
                let lock = shown.json["lock"] as? [String: Any]
                #expect(lock?["cause"] as? String == "failed_logins")
                #expect(lock?["reason"] as? String == "too_many_failed_logins")
                #expect(lock?["failed_attempts"] as? Int == 3)
                let lockEvent = try await env.ownerScalar(
                    """
                    SELECT actor_role || '/' || coalesce(actor_id::text, '-') FROM audit_events WHERE target_id = \
                    '\(customer.id.uuidString.lowercased())' AND action = 'accounts.lock'
                    """,
                    as: String.self)
                #expect(lockEvent == "system/-")

                let reset = try await client.call(
                    .post, "/v1/customers/\(customer.id)/password-resets", token: app, json: "{}")
                #expect(reset.status == 200)
                #expect(reset["status"] == "active")
                #expect(reset["failed_logins"] == "0")
            }
        }
    }

    @Test("a password reset does not lift a manager's manual lock")
    func resetKeepsManualLock() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "fraud"),
                context: env.context(.backendManager))
            try await env.withApp { client in
                let reset = try await client.call(
                    .post, "/v1/customers/\(customer.id)/password-resets", token: env.fixture.tokens[.appService]!,
                    json: "{}")
                #expect(reset["status"] == "locked")
            }
        }
    }

    @Test("a timed lock lifts itself when it expires, audited by the system")
    func timedLock() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            _ = try await env.database.run(
                TransitionAccount(
                    customerID: customer.id, move: .lock, reason: "cool-off",
                    until: env.clock.now().addingTimeInterval(3600)),
                context: env.context(.backendManager))
            let expiry = LockExpiryService(database: env.database, policies: env.policies, interval: .seconds(1))
            env.clock.advance(by: 3599)
            #expect(try await expiry.liftDue() == 0, "not yet due a second before")
            env.clock.advance(by: 1)  // time passes when the test says so: no sleeping
            #expect(try await expiry.liftDue() == 1)
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self)
                    == "active")
            let event = try await env.ownerScalar(
                """
                SELECT actor_role || '/' || reason FROM audit_events WHERE target_id = \
                '\(customer.id.uuidString.lowercased())' AND action = 'accounts.unlock'
                """,
                as: String.self)
            #expect(event == "system/lock_expired")
            let lift = try await env.ownerScalar(
                """
                SELECT coalesce(lifted_by::text, 'system') || '/' || lift_reason FROM account_locks WHERE \
                customer_id = '\(customer.id)'
                """,
                as: String.self)
            #expect(lift == "system/lock_expired")
        }
    }
}
