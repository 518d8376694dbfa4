import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console access: API tokens (the secret shown once) and tenants")
struct ConsoleTenancyTests {
    @Test(
        """
        a partner admin issues a token for its shop (the secret shown once, stored as its hash, working at once) \
        and revokes it, confirmed; a platform admin creates a tenant, a taken slug refused next to the field; a \
        partner has no tenants page
        """
    )
    func tokensAndTenants() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let partner = env.fixture.partners[0]
                let admin = try await ConsoleClient.signedIn(env, client, as: partner.admin.operatorID)
                let page = try await admin.get("/console/tokens")
                #expect(page.status == 200)
                let owner = try #require(partner.admin.operatorID)
                let issued = try await admin.post(
                    "/console/tokens/new", ["operator_id": owner.text, "name": "stock sync", "expires_in_hours": "24"],
                    csrf: page.csrf)
                #expect(issued.status == 200)
                let secret = try #require(
                    issued.text.after(last: "id=\"token-secret\" class=\"wrap\" value=\"")?.prefix { $0 != "\"" })
                #expect(secret.hasPrefix("bo_"))
                #expect(
                    try await client.call(.get, "/v1/me", token: String(secret)).status == 200,
                    "the token works at once")
                let stored = try await env.ownerScalar(
                    "SELECT count(*) FROM tokens t WHERE t::text LIKE '%\(secret)%'", as: Int64.self)
                #expect(stored == 0, "only its hash is stored")
                let tokenID = try #require(
                    try await env.ownerScalar("SELECT id::text FROM tokens WHERE name = 'stock sync'", as: String.self))
                let list = try await admin.get("/console/tokens")
                #expect(
                    list.text.contains("stock sync") && !list.text.contains(String(secret)),
                    "listed, never with its secret")
                #expect(
                    try await admin.post("/console/tokens/\(tokenID)/revoke", [:], csrf: page.csrf).status == 422,
                    "unconfirmed")
                #expect(
                    try await admin.post("/console/tokens/\(tokenID)/revoke", ["confirm": "yes"], csrf: page.csrf)
                        .status == 303)
                #expect(try await client.call(.get, "/v1/me", token: String(secret)).status == 401, "revoked at once")
                let tooLong = try await admin.post(
                    "/console/tokens/new", ["operator_id": owner.text, "expires_in_hours": "99999"], csrf: page.csrf)
                #expect(tooLong.status == 422 && tooLong.text.contains("id=\"expires_in_hours-error\""))
                #expect(try await admin.get("/console/tenants").status == 403)
                let narrowed = try await admin.post(
                    "/console/tokens/new",
                    [
                        "operator_id": owner.text, "name": "orders only", "scope_orders:read": "yes",
                    ], csrf: page.csrf)
                let bound = try await admin.post(
                    "/console/tokens/new",
                    ["operator_id": owner.text, "name": "office only", "allowed_addresses": "127.0.0.1, ::1"],
                    csrf: page.csrf)
                #expect(bound.status == 200)
                let narrowSecret = try #require(
                    narrowed.text.after(last: "id=\"token-secret\" class=\"wrap\" value=\"")?.prefix { $0 != "\"" })
                #expect(try await client.call(.get, "/v1/orders", token: String(narrowSecret)).status == 200)
                let goods = try await client.call(.get, "/v1/goods", token: String(narrowSecret))
                #expect(goods.status == 403 && goods["code"] == "insufficient_scope", "\(goods.text)")
                let listed = try await admin.get("/console/tokens")
                #expect(listed.text.contains("orders:read") && listed.text.contains("127.0.0.1/32, ::1/128"))
                #expect(listed.text.contains("id=\"scope_goods:write\""), "the partner's scopes are offered")
                #expect(!listed.text.contains("id=\"scope_tenants:write\""), "not the platform's")
                let foreign = try await admin.post(
                    "/console/tokens/new",
                    ["operator_id": owner.text, "scope_tenants:write": "yes", "allowed_addresses": "10.0.0.0/99"],
                    csrf: page.csrf)
                #expect(foreign.status == 422 && foreign.text.contains("id=\"scopes-error\""))
                #expect(foreign.text.contains("id=\"allowed_addresses-error\""))

                let platform = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.platformAdmin]?.operatorID)
                let tenants = try await platform.get("/console/tenants")
                #expect(tenants.status == 200 && tenants.text.contains(partner.slug))
                let created = try await platform.post(
                    "/console/tenants/new", ["name": "Fresh Juice Co", "slug": "fresh-juice"], csrf: tenants.csrf)
                #expect(created.status == 303)
                let taken = try await platform.post(
                    "/console/tenants/new", ["name": "Again", "slug": "fresh-juice"], csrf: tenants.csrf)
                #expect(taken.status == 422 && taken.text.contains("id=\"slug-error\""))
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM tenants WHERE slug = 'fresh-juice'", as: Int64.self)
                        == 1)
            }
        }
    }
}
