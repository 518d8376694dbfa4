import Backoffice
import BackofficeAPI
import Foundation
import Testing

@Suite("Tokens and operators")
struct TokenTests {
    @Test("a token is shown once, stored as SHA-256, and refused at once when revoked or expired")
    func lifecycle() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.tokens[.platformAdmin]!
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/operators", token: admin, json: #"{"email":"temp@healthtrack.example","role":"backend_manager"}"#)
                #expect(created.status == 201)
                let operatorID = try #require(created["id"])
                let token = try await client.call(.post, "/v1/tokens", token: admin, json: #"{"operator_id":"\#(operatorID)","name":"cli"}"#)
                #expect(token.status == 201)
                let secret = try #require(token["secret"])
                #expect(secret.hasPrefix("bo_") && secret.count == 46)
                let tokenID = try token.decode(Components.Schemas.TokenCreated.self).token.id
                let stored = try await env.ownerScalar("SELECT count(*) FROM tokens WHERE secret_hash = sha256('\(secret)'::bytea)", as: Int.self)
                #expect(stored == 1)
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE after::text LIKE '%\(secret)%'", as: Int.self) == 0)
                let listed = try await client.call(.get, "/v1/tokens?operator_id=\(operatorID)", token: admin)
                #expect(!listed.text.contains(secret))

                #expect(try await client.call(.get, "/v1/customers", token: secret).status == 200)
                #expect(try await client.call(.delete, "/v1/tokens/\(tokenID)", token: admin).status == 200)
                #expect(try await client.call(.get, "/v1/customers", token: secret).status == 401)
                #expect(try await client.call(.delete, "/v1/tokens/\(tokenID)", token: admin).status == 409)

                let second = try await client.call(.post, "/v1/tokens", token: admin, json: #"{"operator_id":"\#(operatorID)","expires_in_hours":1}"#)
                let secondSecret = try #require(second["secret"])
                #expect(try await client.call(.get, "/v1/customers", token: secondSecret).status == 200)
                try await env.asOwner(
                    "UPDATE tokens SET expires_at = now() - interval '1 second' WHERE secret_hash = sha256('\(secondSecret)'::bytea)")
                #expect(try await client.call(.get, "/v1/customers", token: secondSecret).status == 401)

                let tooLong = try await client.call(
                    .post, "/v1/tokens", token: admin, json: #"{"operator_id":"\#(operatorID)","expires_in_hours":999999}"#)
                #expect(tooLong.status == 422)
            }
        }
    }

    @Test("disabling an operator refuses its tokens at once")
    func disable() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                #expect(try await client.call(.get, "/v1/tenants/\(partner.tenantID)", token: partner.staffToken).status == 200)
                let staff = try await client.call(.get, "/v1/operators?tenant_id=\(partner.tenantID)", token: partner.adminToken)
                let staffID = try #require(try staff.decode(Components.Schemas.OperatorPage.self).items.first { $0.role == .partnerStaff }?.id)
                let disabled = try await client.call(
                    .post, "/v1/operators/\(staffID)/disable", token: partner.adminToken, json: #"{"reason":"left"}"#)
                #expect(disabled.status == 200)
                #expect(try await client.call(.get, "/v1/tenants/\(partner.tenantID)", token: partner.staffToken).status == 401)
                // A partner admin cannot reach another tenant's operators, nor create platform roles.
                let other = env.fixture.partners[1]
                let foreign = try await client.call(.get, "/v1/operators?tenant_id=\(other.tenantID)", token: partner.adminToken)
                #expect((foreign.json["items"] as? [Any])?.isEmpty == true)
                let escalate = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken, json: #"{"email":"x@y.example","role":"platform_admin"}"#)
                #expect(escalate.status == 422)
            }
        }
    }

    @Test("bootstrap creates the first platform admin once")
    func bootstrap() async throws {
        try await TestEnvironment.with { env in
            try await env.asOwner("UPDATE operators SET status = 'disabled' WHERE role = 'platform_admin'")
            let (admin, secret) = try await Bootstrap.platformAdmin(
                email: "first@healthtrack.example", database: env.database, policies: env.policies)
            #expect(admin.role == .platformAdmin)
            let principal = try await Authenticator(database: env.database).principal(for: secret.value)
            #expect(principal?.role == "platform_admin")
            await #expect(throws: Bootstrap.Refused.self) {
                _ = try await Bootstrap.platformAdmin(email: "second@healthtrack.example", database: env.database, policies: env.policies)
            }
        }
    }
}
