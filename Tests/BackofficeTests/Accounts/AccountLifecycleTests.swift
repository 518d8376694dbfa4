import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension AccountsAPITests {
    @Test(
        """
        sync creates (201), updates a changed email (200, audited with what changed), and an identical sync \
        changes and logs nothing
        """
    )
    func syncCreateUpdateUnchanged() async throws {
        try await TestEnvironment.with { env in
            let app = env.fixture.tokens[.appService]!
            let id = UUID().uuidString.lowercased()
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sync@example.com","display_name":"Sync One"}"#)
                #expect(created.status == 201)
                let updated = try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One"}"#)
                #expect(updated.status == 200)
                #expect(updated["email"] == "sync2@example.com")
                #expect(updated["version"] == "2")
                let account = {
                    try await env.ownerScalar(
                        """
                        SELECT email || ' ' || display_name || ' ' || subscription || ' v' || version FROM \
                        customers WHERE id = '\(id)'
                        """,
                        as: String.self)
                }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
                let (accountBefore, eventsBefore) = (try await account(), try await events())
                let same = try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One"}"#)
                #expect(same.status == 200)
                #expect(same["version"] == "2", "an identical sync changes nothing")
                #expect(try await account() == accountBefore, "the stored account and its version are unchanged")
                #expect(try await events() == eventsBefore, "an identical sync logs nothing")
                #expect(same["subscription"] == "none")
                let renews = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(30 * 86_400))
                let claimed = try await client.call(
                    .post, "/v1/customers", token: app,
                    json:
                        #"""
                        {"id":"\#(id)","email":"sync3@example.com","display_name":"Sync One",\#
                        "subscription":"active","renews_at":"\#(renews)"}
                        """#
                )
                #expect(claimed.status == 422 && claimed.text.contains("derived"), "\(claimed.text)")
                #expect(try await account() == accountBefore, "a refused sync changes nothing, not even the email")
                let subscribed = try await client.call(
                    .post, "/v1/customers/\(id)/subscriptions", token: app, json: SubscribeTests.body(),
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(subscribed["status"] == "trialing", "\(subscribed.text)")
                let kept = try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One"}"#)
                #expect(kept["subscription"] == "active", "derived from the trial")
                #expect(kept["renews_at"] != nil && kept["version"] == "3", "\(kept.text)")
                let repeated = try await client.call(
                    .post, "/v1/customers", token: app,
                    json:
                        #"""
                        {"id":"\#(id)","email":"sync2@example.com","display_name":"Sync One",\#
                        "subscription":"active","renews_at":"\#(kept["renews_at"] ?? "")"}
                        """#
                )
                #expect(repeated.status == 200, "the records' own state may be sent back: \(repeated.text)")
            }
            let reasons = try await env.ownerScalar(
                """
                SELECT string_agg(reason, ' | ' ORDER BY id) FROM audit_events WHERE action = 'accounts.sync' AND \
                target_id = '\(id)'
                """,
                as: String.self)
            #expect(reasons == "created | updated: email")
        }
    }

    @Test("deleted accounts are hidden by default, restorable, and purged after the retention period (dry run first)")
    func deleteRestorePurge() async throws {
        try await TestEnvironment.with { env in
            let keep = try await env.customer("keep-\(UUID().uuidString.prefix(6))@example.com")
            let old = try await env.customer("old-\(UUID().uuidString.prefix(6))@example.com")
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                _ = try await client.call(
                    .delete, "/v1/customers/\(keep.id)", token: manager, json: #"{"reason":"asked"}"#)
                _ = try await client.call(
                    .delete, "/v1/customers/\(old.id)", token: manager, json: #"{"reason":"asked"}"#)
                let list = try await client.call(.get, "/v1/customers?limit=500", token: manager)
                let ids = (list.json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(!ids.contains(keep.id.uuidString.lowercased()))
                let deleted = try await client.call(.get, "/v1/customers?status=deleted", token: manager)
                #expect((deleted.json["items"] as? [Any])?.count == 2)

                try await env.asOwner(
                    "UPDATE customers SET deleted_at = now() - interval '31 days' WHERE id = '\(old.id)'")
                let dry = try await client.call(
                    .post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":true}"#)
                #expect(dry.json["purged"] as? [String] == [old.id.uuidString.lowercased()])
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM customers WHERE id = '\(old.id)'", as: Int.self)
                        == 1)
                let purge = try await client.call(.post, "/v1/maintenance/purge", token: manager, json: #"{}"#)
                #expect(purge.json["purged"] as? [String] == [old.id.uuidString.lowercased()])
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM customers WHERE id = '\(old.id)'", as: Int.self)
                        == 0)
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE action = 'accounts.purge' AND target_id = \
                        '\(old.id.uuidString.lowercased())'
                        """,
                        as: Int.self) == 1)

                let restored = try await client.call(
                    .post, "/v1/customers/\(keep.id)/restore", token: manager, json: #"{"reason":"mistake"}"#)
                #expect(restored["status"] == "active")
            }
        }
    }
}
