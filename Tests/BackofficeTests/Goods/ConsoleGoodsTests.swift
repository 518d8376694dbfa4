import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console pages: the API's use cases, CSRF, headers, escaping, tenancy, audited with the session")
struct ConsoleGoodsTests {
    /// A signed-in partner admin of the fixture's `index`th partner.
    func partnerAdmin(_ env: TestEnvironment, _ client: any TestClientProtocol, index: Int = 0) async throws
        -> ConsoleClient
    {
        try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[index].admin.operatorID)
    }

    @Test(
        """
        a good created in the console is the API's CreateGood: audited with the session (via console); its name \
        is text everywhere; prices are dollars
        """
    )
    func createGood() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let browser = try await partnerAdmin(env, client)
                let form = try await browser.get("/console/goods/new")
                #expect(form.status == 200)
                let hostile = "<img src=x onerror=alert(1)>"
                let csrf = try #require(form.csrf)  // bound first: as an optional argument, #require could not fail
                let created = try await browser.post(
                    "/console/goods/new",
                    ["sku": "XSS-1", "name": hostile, "category": "snacks", "price": "12.50", "stock": "3"], csrf: csrf)
                #expect(created.status == 303)
                let page = try await browser.get(try #require(created.location))
                #expect(page.status == 200)
                let list = try await browser.get("/console/goods")
                for html in [page.text, list.text] {
                    #expect(!html.contains(hostile))
                    #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
                }
                #expect(list.text.contains("$12.50"))
                let cents = try await env.ownerScalar(
                    "SELECT price_cents FROM goods WHERE sku = 'XSS-1'", as: Int64.self)
                #expect(cents == 1250)
                let audited = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'goods.create' AND session_id IS NOT NULL \
                    AND token_id IS NULL
                    """,
                    as: Int64.self)
                #expect(audited == 1)
                let api = try await client.call(
                    .get, "/v1/audit/events?action=goods.create", token: env.fixture.tokens[.auditor])
                let items = api.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1)
                #expect(items.first?["via"] as? String == "console")
            }
        }
    }

    @Test(
        """
        a form posted without its session's CSRF token, with another session's, or from another origin is refused \
        (403) and changes nothing
        """
    )
    func forgery() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let browser = try await partnerAdmin(env, client)
                let other = try await partnerAdmin(env, client, index: 1)
                let csrf = try #require(try await browser.get("/console/goods/new").csrf)
                let otherCSRF = try #require(try await other.get("/console/goods/new").csrf)
                let before = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int64.self)
                let fields = ["sku": "FORGED-1", "name": "Forged", "category": "snacks", "price": "1.00", "stock": "1"]
                let refused = [
                    try await browser.post("/console/goods/new", fields, csrf: nil),
                    try await browser.post("/console/goods/new", fields, csrf: otherCSRF),
                    try await browser.post(
                        "/console/goods/new", fields, csrf: csrf, headers: ["Origin": "https://evil.example"]),
                ]
                for reply in refused {
                    #expect(reply.status == 403)
                    #expect(reply.text.contains("nothing was changed"))
                }
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM goods WHERE sku = 'FORGED-1'", as: Int64.self) == 0)
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int64.self) == before)
                let accepted = try await browser.post("/console/goods/new", fields, csrf: csrf)
                #expect(accepted.status == 303, "the same post with its token goes through")
            }
        }
    }

    @Test(
        """
        every console answer carries the CSP (no inline script, no framing), Referrer-Policy, nosniff and \
        no-store; assets are cached by content hash
        """
    )
    func headers() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let browser = try await partnerAdmin(env, client)
                let pages = [
                    try await ConsoleClient(client).get("/console/sign-in"), try await browser.get("/console/goods"),
                    try await browser.get("/console/goods/\(UUID())"),
                ]
                for page in pages {
                    let csp = page.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
                    #expect(
                        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline")
                            && csp.contains("frame-ancestors 'none'"))
                    #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
                    #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                    #expect(page.headers[.cacheControl] == "no-store")
                    #expect(!page.text.contains("<script>"), "no inline script")
                }
                let stylesheet = try #require(
                    pages[1].text.range(of: "/console/assets/console.[0-9a-f]{12}\\.css", options: .regularExpression))
                let asset = try await browser.get(String(pages[1].text[stylesheet]))
                #expect(asset.status == 200)
                #expect(asset.headers[.cacheControl] == "public, max-age=31536000, immutable")
            }
        }
    }

    @Test(
        """
        another tenant's good is a 404 page in the console's layout, and a bad field is shown next to it with the \
        input kept (422)
        """
    )
    func tenancyAndValidation() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let alpha = try await partnerAdmin(env, client)
                let beta = try await partnerAdmin(env, client, index: 1)
                let csrf = try #require(try await beta.get("/console/goods/new").csrf)
                let created = try await beta.post(
                    "/console/goods/new",
                    ["sku": "BETA-1", "name": "Beta's", "category": "snacks", "price": "1.00", "stock": "1"], csrf: csrf
                )
                let path = try #require(created.location)
                let foreign = try await alpha.get(path)
                #expect(foreign.status == 404)
                #expect(foreign.text.contains("Not found") && foreign.text.contains("<nav"))
                #expect(!foreign.text.contains("Beta's"))
                let alphaCSRF = try #require(try await alpha.get("/console/goods/new").csrf)
                let bad = try await alpha.post(
                    "/console/goods/new",
                    ["sku": "bad sku", "name": "Kept name", "category": "snacks", "price": "1.00", "stock": "1"],
                    csrf: alphaCSRF)
                #expect(bad.status == 422)
                #expect(bad.text.contains("id=\"sku-error\""))
                #expect(bad.text.contains("value=\"Kept name\""))
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM goods WHERE name = 'Kept name'", as: Int64.self)
                        == 0)
            }
        }
    }

    @Test(
        """
        saving a good someone changed since the form was opened is refused with who changed it and when, the \
        edits kept and a reload link; the other change stands
        """
    )
    func staleEdit() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let browser = try await partnerAdmin(env, client)
                let csrf = try #require(try await browser.get("/console/goods/new").csrf)
                let created = try await browser.post(
                    "/console/goods/new",
                    ["sku": "STALE-1", "name": "First", "category": "snacks", "price": "1.00", "stock": "1"], csrf: csrf
                )
                let path = try #require(created.location)
                let form = try await browser.get(path)
                #expect(form.text.contains("name=\"version\" value=\"&quot;1&quot;\""))
                let id = try #require(UUID(uuidString: String(path.split(separator: "/").last ?? "")))
                let admin = OperationContext(
                    principal: env.fixture.partners[0].admin, requestID: "t", sourceIP: nil, policies: env.policies)
                _ = try await env.database.run(
                    UpdateGood(goodID: id, changes: GoodChanges(name: "Theirs"), ifMatch: "\"1\""), context: admin)
                let editCSRF = try #require(form.csrf)
                let stale = try await browser.post(
                    path,
                    [
                        "version": "\"1\"", "name": "Mine", "category": "snacks", "price": "1.00", "stock": "1",
                        "status": "draft",
                    ], csrf: editCSRF
                )
                #expect(stale.status == 422)
                let email = try #require(
                    try await env.ownerScalar(
                        "SELECT email FROM operators WHERE id = '\(env.fixture.partners[0].admin.operatorID!)'",
                        as: String.self))
                #expect(stale.text.contains("\(email) changed this good at "), "who changed it, and when")
                #expect(stale.text.contains("value=\"Mine\""), "the edits are kept")
                #expect(stale.text.contains(">Reload</a>"))
                #expect(
                    try await env.ownerScalar("SELECT name FROM goods WHERE id = '\(id)'", as: String.self) == "Theirs")
            }
        }
    }
}
