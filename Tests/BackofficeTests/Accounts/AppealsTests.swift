import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension AccountsAPITests {
    @Test("appeals: filed for a locked account, lifted by a manager; resolving twice is an invalid transition")
    func appeals() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let early = try await client.call(
                    .post, "/v1/customers/\(customer.id)/appeals", token: app, json: #"{"message":"why?"}"#)
                #expect(early.status == 409)
                _ = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: manager, json: #"{"reason":"suspicious"}"#)
                let filed = try await client.call(
                    .post, "/v1/customers/\(customer.id)/appeals", token: app, json: #"{"message":"it was me"}"#)
                #expect(filed.status == 201)
                let appealID = try #require(filed["id"])
                let twice = try await client.call(
                    .post, "/v1/customers/\(customer.id)/appeals", token: app, json: #"{"message":"again"}"#)
                #expect(twice.status == 409)
                let open = try await client.call(.get, "/v1/appeals?status=open", token: manager)
                #expect((open.json["items"] as? [Any])?.count == 1)
                let lifted = try await client.call(
                    .post, "/v1/appeals/\(appealID)/resolve", token: manager,
                    json: #"{"decision":"lift","reason":"verified"}"#)
                #expect(lifted["status"] == "lifted")
                let shown = try await client.call(.get, "/v1/customers/\(customer.id)", token: manager)
                #expect(shown["status"] == "active")
                let again = try await client.call(
                    .post, "/v1/appeals/\(appealID)/resolve", token: manager,
                    json: #"{"decision":"uphold","reason":"x"}"#)
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
                _ = try await client.call(
                    .post, "/v1/customers/\(customer.id)/lock", token: manager, json: #"{"reason":"chargeback"}"#)
                let filed = try await client.call(
                    .post, "/v1/customers/\(customer.id)/appeals", token: env.fixture.tokens[.appService]!,
                    json: #"{"message":"not me"}"#)
                let appealID = try #require(filed["id"])
                let upheld = try await client.call(
                    .post, "/v1/appeals/\(appealID)/resolve", token: manager,
                    json: #"{"decision":"uphold","reason":"bank confirmed"}"#)
                #expect(upheld.status == 200)
                #expect(upheld["status"] == "upheld")
                let account = try await client.call(.get, "/v1/customers/\(customer.id)", token: manager)
                #expect(account["status"] == "locked")
                let open = try await client.call(.get, "/v1/appeals?status=open", token: manager)
                #expect(try open.decode(Components.Schemas.AppealPage.self).items.isEmpty)
            }
            let unlocks = try await env.ownerScalar(
                """
                SELECT count(*) FROM audit_events WHERE target_id = '\(customer.id.uuidString.lowercased())' AND \
                action = 'accounts.unlock'
                """,
                as: Int.self)
            #expect(unlocks == 0)
        }
    }
}
