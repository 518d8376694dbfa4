import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Tokens and operators")
struct TokenTests {
    @Test("a token is shown once, stored as SHA-256, and refused at once when revoked or expired")
    func lifecycle() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.tokens[.platformAdmin]!
            let temp = try await env.database.runAsSystem(
                CreateOperator(email: "temp@healthtrack.example", role: .backendManager, tenantID: nil),
                context: .system("test", policies: env.policies))
            try await env.withApp { client in
                let operatorID = temp.id.text
                let token = try await client.call(
                    .post, "/v1/tokens", token: admin, json: #"{"operator_id":"\#(operatorID)","name":"cli"}"#)
                #expect(token.status == 201)
                let secret = try #require(token["secret"])
                #expect(secret.hasPrefix("bo_") && secret.count == 46)
                let tokenID = try token.decode(Components.Schemas.TokenCreated.self).token.id
                let stored = try await env.ownerScalar(
                    "SELECT count(*) FROM tokens WHERE secret_hash = sha256('\(secret)'::bytea)", as: Int.self)
                #expect(stored == 1)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE after::text LIKE '%\(secret)%'", as: Int.self) == 0)
                let listed = try await client.call(.get, "/v1/tokens?operator_id=\(operatorID)", token: admin)
                #expect(!listed.text.contains(secret))

                #expect(try await client.call(.get, "/v1/customers", token: secret).status == 200)
                #expect(try await client.call(.delete, "/v1/tokens/\(tokenID)", token: admin).status == 200)
                #expect(try await client.call(.get, "/v1/customers", token: secret).status == 401)
                #expect(try await client.call(.delete, "/v1/tokens/\(tokenID)", token: admin).status == 409)

                let second = try await client.call(
                    .post, "/v1/tokens", token: admin, json: #"{"operator_id":"\#(operatorID)","expires_in_hours":1}"#)
                let secondSecret = try #require(second["secret"])
                #expect(try await client.call(.get, "/v1/customers", token: secondSecret).status == 200)
                try await env.asOwner(
                    """
                    UPDATE tokens SET expires_at = now() - interval '1 second' WHERE secret_hash = \
                    sha256('\(secondSecret)'::bytea)
                    """
                )
                #expect(try await client.call(.get, "/v1/customers", token: secondSecret).status == 401)

                let tooLong = try await client.call(
                    .post, "/v1/tokens", token: admin,
                    json: #"{"operator_id":"\#(operatorID)","expires_in_hours":999999}"#)
                #expect(tooLong.status == 422)
            }
        }
    }

    @Test("disabling an operator refuses its tokens at once")
    func disable() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                #expect(
                    try await client.call(.get, "/v1/tenants/\(partner.tenantID)", token: partner.staffToken).status
                        == 200)
                let staff = try await client.call(
                    .get, "/v1/operators?tenant_id=\(partner.tenantID)", token: partner.adminToken)
                let staffID = try #require(
                    try staff.decode(Components.Schemas.OperatorPage.self).items.first { $0.role == .partnerStaff }?.id)
                let disabled = try await client.call(
                    .post, "/v1/operators/\(staffID)/disable", token: partner.adminToken, json: #"{"reason":"left"}"#)
                #expect(disabled.status == 200)
                #expect(
                    try await client.call(.get, "/v1/tenants/\(partner.tenantID)", token: partner.staffToken).status
                        == 401)
                // A partner admin cannot reach another tenant's operators, nor create platform roles.
                let other = env.fixture.partners[1]
                let foreign = try await client.call(
                    .get, "/v1/operators?tenant_id=\(other.tenantID)", token: partner.adminToken)
                #expect((foreign.json["items"] as? [Any])?.isEmpty == true)
                let escalate = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"x@y.example","role":"platform_admin"}"#)
                #expect(escalate.status == 422)
            }
        }
    }

    @Test(
        """
        a partner admin mints tokens for itself and its staff, never for another admin of its tenant (403, \
        nothing written)
        """
    )
    func partnerAdminCannotMintForAnotherAdmin() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let second = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"second-admin@\#(partner.slug).example","role":"partner_admin"}"#)
                #expect(second.status == 201, "\(second.text)")
                let secondID = try #require(second["id"])
                let tokens = { try await env.ownerScalar("SELECT count(*) FROM tokens", as: Int.self) }
                let before = try await tokens()
                let minted = try await client.call(
                    .post, "/v1/tokens", token: partner.adminToken, json: #"{"operator_id":"\#(secondID)"}"#)
                #expect(minted.status == 403, "\(minted.text)")
                #expect(minted["code"] == "forbidden")
                #expect(try await tokens() == before)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'tokens.create' AND target_id IS NULL",
                        as: Int.self)
                        == 0)

                let staffID = try #require(
                    try await client.call(.get, "/v1/operators", token: partner.adminToken).decode(
                        Components.Schemas.OperatorPage.self
                    ).items
                        .first { $0.role == .partnerStaff }?.id)
                let own = partner.admin.operatorID!.uuidString.lowercased()
                for id in [staffID, own] {
                    let reply = try await client.call(
                        .post, "/v1/tokens", token: partner.adminToken, json: #"{"operator_id":"\#(id)"}"#)
                    #expect(reply.status == 201, "\(reply.text)")
                }
                #expect(
                    try await client.call(
                        .post, "/v1/tokens", token: env.fixture.tokens[.platformAdmin]!,
                        json: #"{"operator_id":"\#(secondID)"}"#
                    )
                    .status == 201, "the platform admin may")
            }
        }
    }

    @Test("partner staff may not refund an order (403): returning captured money is the partner admin's")
    func staffCannotRefund() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let refund = try await client.call(
                    .post, "/v1/orders/\(UUID().uuidString.lowercased())/refund", token: partner.staffToken,
                    json: #"{"reason":"broken"}"#)
                #expect(refund.status == 403, "\(refund.text)")
                #expect(refund["code"] == "forbidden")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'orders.refund'", as: Int.self) == 0)
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
                _ = try await Bootstrap.platformAdmin(
                    email: "second@healthtrack.example", database: env.database, policies: env.policies)
            }
        }
    }
}
