import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Dual control of OAuth client registrations with a write scope (`oauth_clients.create` in
/// `policies/approvals.yaml`): the client exists only once a second admin approves it, and its
/// secret reaches only whoever issues it afterwards, never the approval.
@Suite("Two-person approval: OAuth clients with a write scope")
struct ClientRegistrationApprovalTests {
    func register(_ client: any TestClientProtocol, _ token: String, scopes: String, key: String? = nil)
        async throws -> Reply
    {
        try await client.call(
            .post, "/v1/oauth-clients", token: token,
            json: #"{"name":"stock sync","role":"partner_staff","scopes":[\#(scopes)],"reason":"Nightly stock"}"#,
            headers: ["Idempotency-Key": key ?? UUID().uuidString])
    }

    func stored(_ env: TestEnvironment, _ text: String) async throws -> Int {
        try await env.ownerScalar(
            """
            SELECT (SELECT count(*) FROM approval_requests WHERE change::text LIKE '%\(text)%')
                + (SELECT count(*) FROM audit_events WHERE coalesce(after::text, '') LIKE '%\(text)%')
                + (SELECT count(*) FROM idempotency_keys WHERE convert_from(body, 'UTF8') LIKE '%\(text)%')
            """, as: Int.self) ?? -1
    }

    @Test(
        """
        a shop's client with a write scope is held (202, naming the client to be); read scopes alone are not; \
        a second admin of the shop approves it without seeing a secret; the requester issues the first secret, \
        which gets a token, and is stored nowhere
        """
    )
    func heldApprovedThenSecretIssued() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let secondAdmin = try await env.database.runAsSystem(
                CreateOperator(email: "second@green-grocer.example", role: .partnerAdmin, tenantID: partner.tenantID),
                context: .system("test", policies: env.policies))
            let second = try await env.database.runAsSystem(
                CreateToken(operatorID: secondAdmin.id, name: "test", expiresInHours: nil),
                context: .system("test", policies: env.policies)
            ).1.value
            try await env.withApp { client in
                let readOnly = try await register(client, partner.adminToken, scopes: #""orders:read""#)
                #expect(readOnly.status == 201, "read scopes alone are registered at once")
                let held = try await register(client, partner.adminToken, scopes: #""orders:read","goods:write""#)
                #expect(held.status == 202)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(
                    (request.action, request.targetType, request.reason) == (
                        "oauth_clients.create", "oauth_client", "Nightly stock"
                    ))
                let clientID = request.targetId
                let count = "SELECT count(*) FROM oauth_clients WHERE id = '\(clientID)'"
                #expect(try await env.ownerScalar(count, as: Int.self) == 0, "no client while held")

                let own = try await ApprovalTests().decide(client, partner.adminToken, request.id, "approve")
                #expect(own.status == 403 && own["code"] == "own_request")
                let otherShop = try await ApprovalTests().decide(
                    client, env.fixture.partners[1].adminToken, request.id, "approve")
                #expect(otherShop.status == 404, "another shop's admin does not see it")
                let approved = try await ApprovalTests().decide(client, second, request.id, "approve")
                #expect(approved.status == 200 && !approved.text.contains("oc_"), "the approval carries no secret")
                #expect(try await env.ownerScalar(count, as: Int.self) == 1)
                let tenant = try await env.ownerScalar(
                    "SELECT tenant_id::text FROM oauth_clients WHERE id = '\(clientID)'", as: String.self)
                #expect(tenant == partner.tenantID.text, "registered in the requester's shop")

                let approver = try await client.call(.post, "/v1/oauth-clients/\(clientID)/secret", token: second)
                #expect(
                    (approver.status, approver["code"]) == (403, "not_the_owner"), "the approver never takes its secret"
                )
                let key = UUID().uuidString
                let issued = try await client.call(
                    .post, "/v1/oauth-clients/\(clientID)/secret", token: partner.adminToken,
                    headers: ["Idempotency-Key": key])
                #expect(issued.status == 201 && issued.headers[.cacheControl] == "no-store")
                let secret = try #require(issued["client_secret"])
                let basic = "Basic " + Data("\(clientID):\(secret)".utf8).base64EncodedString()
                let granted = try await OAuthClientTests.token(
                    client, form: "grant_type=client_credentials", basic: basic)
                #expect(granted.status == 200 && granted["scope"] == "goods:write orders:read")
                let replay = try await client.call(
                    .post, "/v1/oauth-clients/\(clientID)/secret", token: partner.adminToken,
                    headers: ["Idempotency-Key": key])
                #expect(replay.status == 201 && replay["client_secret"] == nil, "a replay withholds the secret")
                #expect(try await stored(env, secret) == 0, "the secret is in no table")

                let again = try await client.call(
                    .post, "/v1/oauth-clients/\(clientID)/secret", token: partner.adminToken,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(again.status == 201 && again["client_secret"] != secret)
                let old = try await OAuthClientTests.token(client, form: "grant_type=client_credentials", basic: basic)
                #expect(old.status == 401, "the previous secret stops working")
            }
        }
    }

    @Test(
        """
        a platform admin approves a shop's client: it is registered in the shop, for the shop's admin who asked, \
        who alone takes its secret
        """
    )
    func platformApprovesAShopsClient() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let held = try await register(client, partner.adminToken, scopes: #""goods:write""#)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                let platform = env.fixture.tokens[.platformAdmin]!
                let approved = try await ApprovalTests().decide(client, platform, request.id, "approve")
                #expect(approved.status == 200, "\(approved.text)")
                let row = try await env.ownerScalar(
                    """
                    SELECT tenant_id::text || '|' || owner_id::text FROM oauth_clients
                    WHERE id = '\(request.targetId)'
                    """, as: String.self)
                #expect(row == "\(partner.tenantID.text)|\(try #require(partner.admin.operatorID).text)")
                let byPlatform = try await client.call(
                    .post, "/v1/oauth-clients/\(request.targetId)/secret", token: platform)
                #expect(byPlatform.status == 403)
                let byOwner = try await client.call(
                    .post, "/v1/oauth-clients/\(request.targetId)/secret", token: partner.adminToken)
                #expect(byOwner.status == 201 && byOwner["client_secret"] != nil)
            }
        }
    }

    @Test(
        """
        a revoked client gets no new secret (409); another shop's client is 404; staff may not issue one; a client's \
        operator takes no API token
        """
    )
    func secretRefusals() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let made = try await register(client, partner.adminToken, scopes: #""orders:read""#)
                let id = try #require((made.json["client"] as? [String: Any])?["id"] as? String)
                let operatorID = try #require((made.json["client"] as? [String: Any])?["operator_id"] as? String)
                let token = try await client.call(
                    .post, "/v1/tokens", token: partner.adminToken, json: #"{"operator_id":"\#(operatorID)"}"#)
                #expect(token.status == 403, "\(token.text)")
                let foreign = try await client.call(
                    .post, "/v1/oauth-clients/\(id)/secret", token: env.fixture.partners[1].adminToken)
                #expect(foreign.status == 404)
                let staff = try await client.call(.post, "/v1/oauth-clients/\(id)/secret", token: partner.staffToken)
                #expect(staff.status == 403)
                #expect(
                    try await client.call(.delete, "/v1/oauth-clients/\(id)", token: partner.adminToken).status == 200)
                let revoked = try await client.call(
                    .post, "/v1/oauth-clients/\(id)/secret", token: partner.adminToken)
                #expect(revoked.status == 409)
            }
        }
    }
}
