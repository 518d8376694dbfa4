import Backoffice
import BackofficeAPI
import Foundation
import Testing

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
                    .post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"Chargeback under investigation"}"#,
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

                let unlocked = try await client.call(.post, "/v1/customers/\(customer.id)/unlock", token: token, json: #"{"reason":"Resolved"}"#)
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
            try await env.withApp { client in
                let partner = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.partners[0].adminToken, json: #"{"reason":"x"}"#)
                #expect(partner.status == 403)
                #expect(partner.headers[.contentType] == "application/problem+json")
                #expect(partner["code"] == "forbidden")
                let anonymous = try await client.call(.post, "/v1/customers/\(customer.id)/lock", token: nil, json: #"{"reason":"x"}"#)
                #expect(anonymous.status == 401)
                #expect(anonymous["code"] == "unauthenticated")
                #expect(anonymous.headers[.contentType] == "application/problem+json")
                let wrong = try await client.call(.get, "/v1/customers", token: "bo_not-a-real-token-at-all-000000000000000000")
                #expect(wrong.status == 401)
            }
            #expect(try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self) == "active")
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == before)
        }
    }

    @Test("no-ops are 409 invalid_transition with the current state, and not logged")
    func noOps() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let token = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let unlock = try await client.call(.post, "/v1/customers/\(customer.id)/unlock", token: token, json: #"{"reason":"x"}"#)
                #expect(unlock.status == 409)
                #expect(unlock["code"] == "invalid_transition")
                #expect(unlock["current_state"] == "active")
                _ = try await client.call(.post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"x"}"#)
                let again = try await client.call(.post, "/v1/customers/\(customer.id)/lock", token: token, json: #"{"reason":"y"}"#)
                #expect(again.status == 409)
                #expect(again["current_state"] == "locked")
            }
            let locks = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND action = 'accounts.lock'",
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
            try await env.withApp { client in
                let reply = try await client.call(.post, "/v1/customers/\(customer.id)/lock", token: env.fixture.tokens[.backendManager]!, json: body)
                #expect(reply.status == status)
                #expect(reply["code"] == code)
                #expect(!(reply.json["errors"] as? [Any] ?? []).isEmpty || code == "malformed_request")
                let bad = try await client.call(
                    .post, "/v1/customers/not-a-uuid/lock", token: env.fixture.tokens[.backendManager]!, json: #"{"reason":"x"}"#)
                #expect(bad.status == 400)
            }
            #expect(try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self) == "active")
        }
    }

    @Test("If-Match with a stale version is 412 and changes nothing")
    func ifMatch() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.withApp { client in
                let stale = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.tokens[.backendManager]!, json: #"{"reason":"x"}"#,
                    headers: ["If-Match": "\"7\""])
                #expect(stale.status == 412)
                let fresh = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: env.fixture.tokens[.backendManager]!, json: #"{"reason":"x"}"#,
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
                    let reply = try await client.call(.post, "/v1/customers/\(customer.id)/login-attempts", token: app, json: #"{"succeeded":false}"#)
                    #expect(reply["status"] == "active")
                    #expect(reply["failed_logins"] == String(attempt))
                }
                let success = try await client.call(.post, "/v1/customers/\(customer.id)/login-attempts", token: app, json: #"{"succeeded":true}"#)
                #expect(success["failed_logins"] == "0", "a success resets the count")
                for _ in 1...3 {
                    _ = try await client.call(.post, "/v1/customers/\(customer.id)/login-attempts", token: app, json: #"{"succeeded":false}"#)
                }
                let shown = try await client.call(.get, "/v1/customers/\(customer.id)", token: env.fixture.tokens[.backendManager]!)
                #expect(shown["status"] == "locked")
                let lock = shown.json["lock"] as? [String: Any]
                #expect(lock?["cause"] as? String == "failed_logins")
                #expect(lock?["reason"] as? String == "too_many_failed_logins")
                #expect(lock?["failed_attempts"] as? Int == 3)
                let lockEvent = try await env.ownerScalar(
                    "SELECT actor_role || '/' || coalesce(actor_id::text, '-') FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND action = 'accounts.lock'",
                    as: String.self)
                #expect(lockEvent == "system/-")

                let reset = try await client.call(.post, "/v1/customers/\(customer.id)/password-resets", token: app, json: "{}")
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
            _ = try await env.database.run(LockAccount(customerID: customer.id, reason: "fraud"), context: env.context(.backendManager))
            try await env.withApp { client in
                let reset = try await client.call(
                    .post, "/v1/customers/\(customer.id)/password-resets", token: env.fixture.tokens[.appService]!, json: "{}")
                #expect(reset["status"] == "locked")
            }
        }
    }

    @Test("a timed lock lifts itself when it expires, audited by the system")
    func timedLock() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            _ = try await env.database.run(
                LockAccount(customerID: customer.id, reason: "cool-off", until: env.clock.now().addingTimeInterval(3600)),
                context: env.context(.backendManager))
            let expiry = LockExpiryService(database: env.database, policies: env.policies, interval: .seconds(1))
            env.clock.advance(by: 3599)
            #expect(try await expiry.liftDue() == 0, "not yet due a second before")
            env.clock.advance(by: 1)  // time passes when the test says so: no sleeping
            #expect(try await expiry.liftDue() == 1)
            #expect(try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self) == "active")
            let event = try await env.ownerScalar(
                "SELECT actor_role || '/' || reason FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND action = 'accounts.unlock'",
                as: String.self)
            #expect(event == "system/lock_expired")
            let lift = try await env.ownerScalar(
                "SELECT coalesce(lifted_by::text, 'system') || '/' || lift_reason FROM account_locks WHERE customer_id = '\(customer.id)'",
                as: String.self)
            #expect(lift == "system/lock_expired")
        }
    }

    @Test("appeals: filed for a locked account, lifted by a manager; resolving twice is an invalid transition")
    func appeals() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let early = try await client.call(.post, "/v1/customers/\(customer.id)/appeals", token: app, json: #"{"message":"why?"}"#)
                #expect(early.status == 409)
                _ = try await client.call(.post, "/v1/customers/\(customer.id)/lock", token: manager, json: #"{"reason":"suspicious"}"#)
                let filed = try await client.call(.post, "/v1/customers/\(customer.id)/appeals", token: app, json: #"{"message":"it was me"}"#)
                #expect(filed.status == 201)
                let appealID = try #require(filed["id"])
                let twice = try await client.call(.post, "/v1/customers/\(customer.id)/appeals", token: app, json: #"{"message":"again"}"#)
                #expect(twice.status == 409)
                let open = try await client.call(.get, "/v1/appeals?status=open", token: manager)
                #expect((open.json["items"] as? [Any])?.count == 1)
                let lifted = try await client.call(
                    .post, "/v1/appeals/\(appealID)/resolve", token: manager, json: #"{"decision":"lift","reason":"verified"}"#)
                #expect(lifted["status"] == "lifted")
                let shown = try await client.call(.get, "/v1/customers/\(customer.id)", token: manager)
                #expect(shown["status"] == "active")
                let again = try await client.call(
                    .post, "/v1/appeals/\(appealID)/resolve", token: manager, json: #"{"decision":"uphold","reason":"x"}"#)
                #expect(again.status == 409)
                #expect(again["code"] == "invalid_transition")
                #expect(again["current_state"] == "lifted")
                let resolved = try await client.call(.get, "/v1/appeals/\(appealID)", token: manager)
                #expect(resolved["status"] == "lifted")
                #expect(resolved["resolution_reason"] == "verified")
                let missing = try await client.call(.get, "/v1/appeals/\(UUID())", token: manager)
                #expect(missing.status == 404)
            }
        }
    }

    @Test("an appeal upheld keeps the lock; the account stays locked and the appeal is closed")
    func appealUpheld() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                _ = try await client.call(.post, "/v1/customers/\(customer.id)/lock", token: manager, json: #"{"reason":"chargeback"}"#)
                let filed = try await client.call(
                    .post, "/v1/customers/\(customer.id)/appeals", token: env.fixture.tokens[.appService]!, json: #"{"message":"not me"}"#)
                let appealID = try #require(filed["id"])
                let upheld = try await client.call(
                    .post, "/v1/appeals/\(appealID)/resolve", token: manager, json: #"{"decision":"uphold","reason":"bank confirmed"}"#)
                #expect(upheld.status == 200)
                #expect(upheld["status"] == "upheld")
                let account = try await client.call(.get, "/v1/customers/\(customer.id)", token: manager)
                #expect(account["status"] == "locked")
                let open = try await client.call(.get, "/v1/appeals?status=open", token: manager)
                #expect(try open.decode(Components.Schemas.AppealPage.self).items.isEmpty)
            }
            let unlocks = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND action = 'accounts.unlock'",
                as: Int.self)
            #expect(unlocks == 0)
        }
    }

    @Test("sync creates (201), updates a changed email (200, audited with what changed), and an identical sync changes and logs nothing")
    func syncCreateUpdateUnchanged() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            let id = UUID().uuidString.lowercased()
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/customers", token: app, json: #"{"id":"\#(id)","email":"sync@example.com","display_name":"Sync One"}"#)
                #expect(created.status == 201)
                let updated = try await client.call(
                    .post, "/v1/customers", token: app, json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One"}"#)
                #expect(updated.status == 200)
                #expect(updated["email"] == "sync2@example.com")
                #expect(updated["version"] == "2")
                let same = try await client.call(
                    .post, "/v1/customers", token: app, json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One"}"#)
                #expect(same.status == 200)
                #expect(same["version"] == "2", "an identical sync changes nothing")
                #expect(same["subscription"] == "none")
                let renews = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(30 * 86_400))
                let subscribed = try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One","subscription":"active","renews_at":"\#(renews)"}"#)
                #expect(subscribed["subscription"] == "active")
                #expect(subscribed["renews_at"] == renews)
                let kept = try await client.call(
                    .post, "/v1/customers", token: app, json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One"}"#)
                #expect(kept["subscription"] == "active", "a sync without the subscription keeps it")
                #expect(kept["version"] == "3")
                let bad = try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One","subscription":"lapsed","renews_at":"\#(renews)"}"#)
                #expect(bad.status == 422)
                #expect(bad.text.contains("renews_at"))
            }
            let reasons = try await env.ownerScalar(
                "SELECT string_agg(reason, ' | ' ORDER BY id) FROM audit_events WHERE action = 'accounts.sync' AND target_id = '\(id)'",
                as: String.self)
            #expect(reasons == "created | updated: email | updated: subscription")
        }
    }

    @Test("deleted accounts are hidden by default, restorable, and purged after the retention period (dry run first)")
    func deleteRestorePurge() async throws {
        try await TestEnvironment.with { env in
            let keep = try await env.customer("keep-\(UUID().uuidString.prefix(6))@example.com")
            let old = try await env.customer("old-\(UUID().uuidString.prefix(6))@example.com")
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                _ = try await client.call(.delete, "/v1/customers/\(keep.id)", token: manager, json: #"{"reason":"asked"}"#)
                _ = try await client.call(.delete, "/v1/customers/\(old.id)", token: manager, json: #"{"reason":"asked"}"#)
                let list = try await client.call(.get, "/v1/customers?limit=500", token: manager)
                let ids = (list.json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(!ids.contains(keep.id.uuidString.lowercased()))
                let deleted = try await client.call(.get, "/v1/customers?status=deleted", token: manager)
                #expect((deleted.json["items"] as? [Any])?.count == 2)

                try await env.asOwner("UPDATE customers SET deleted_at = now() - interval '31 days' WHERE id = '\(old.id)'")
                let dry = try await client.call(.post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":true}"#)
                #expect(dry.json["purged"] as? [String] == [old.id.uuidString.lowercased()])
                #expect(try await env.ownerScalar("SELECT count(*) FROM customers WHERE id = '\(old.id)'", as: Int.self) == 1)
                let purge = try await client.call(.post, "/v1/maintenance/purge", token: manager, json: #"{}"#)
                #expect(purge.json["purged"] as? [String] == [old.id.uuidString.lowercased()])
                #expect(try await env.ownerScalar("SELECT count(*) FROM customers WHERE id = '\(old.id)'", as: Int.self) == 0)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'accounts.purge' AND target_id = '\(old.id.uuidString.lowercased())'",
                        as: Int.self) == 1)

                let restored = try await client.call(.post, "/v1/customers/\(keep.id)/restore", token: manager, json: #"{"reason":"mistake"}"#)
                #expect(restored["status"] == "active")
            }
        }
    }

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
                let masked = try await client.call(.get, "/v1/customers?limit=500", token: env.fixture.tokens[.auditor]!)
                let maskedEmails = (masked.json["items"] as? [[String: Any]] ?? []).compactMap { $0["email"] as? String }
                #expect(maskedEmails.contains("p***@example.com") && maskedEmails.contains("o***@example.com"))
                #expect(!maskedEmails.contains { $0.hasPrefix("page") }, "an auditor sees emails masked")
                let probe = try await client.call(.get, "/v1/customers?email_prefix=pa&limit=1", token: env.fixture.tokens[.auditor]!)
                #expect(probe.status == 403)
                #expect(probe["code"] == "pii_masked", "a masked field cannot be recovered by filtering on it")
                let badCursor = try await client.call(.get, "/v1/customers?cursor=garbage", token: env.fixture.tokens[.backendManager]!)
                #expect(badCursor.status == 400)
                let badLimit = try await client.call(.get, "/v1/customers?limit=501", token: env.fixture.tokens[.backendManager]!)
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
                SyncCustomer(id: UUID(), email: "odd@example.com", displayName: oddName), context: env.context(.appService)
            ).0
            let timed = try await env.customer("timed@example.com")
            _ = try await env.database.run(
                LockAccount(customerID: odd.id, reason: "line\nbreak\ttab", until: Date().addingTimeInterval(3600)),
                context: env.context(.backendManager))
            for _ in 1...3 {
                _ = try await env.database.run(ReportLoginAttempt(customerID: timed.id, succeeded: false), context: env.context(.appService))
            }
            _ = try await env.database.run(
                SyncCustomer(
                    id: UUID(), email: "member@example.com", displayName: "Member", subscription: .active,
                    renewsAt: Date(timeIntervalSince1970: 1_800_000_000.25)), context: env.context(.appService))
            let gone = try await env.customer("gone@example.com")
            _ = try await env.database.run(DeleteAccount(customerID: gone.id, reason: "bye"), context: env.context(.backendManager))
            for role in [Role.backendManager, .auditor] {
                let token = env.fixture.tokens[role]!
                let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
                let reference = try await env.withApp(handEncodedLists: false) { try await $0.call(.get, uri, token: token) }
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
            ("/v1/customers?cursor=not-a-cursor", .backendManager), ("/v1/customers?include_deleted=maybe", .backendManager),
            ("/v1/customers?email_prefix=a", .auditor), ("/v1/customers", .appService),
        ])
    func sameErrors(uri: String, role: Role) async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[role]!
            let fast = try await env.withApp { try await $0.call(.get, uri, token: token) }
            let reference = try await env.withApp(handEncodedLists: false) { try await $0.call(.get, uri, token: token) }
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
