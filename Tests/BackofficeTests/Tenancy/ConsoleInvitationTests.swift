import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Invitations: a one-time link, shown once, valid 24 h, where a person sets a password; people pages")
struct ConsoleInvitationTests {
    /// The `key` of an invitation link.
    private func key(_ link: String) throws -> String { try #require(link.after(last: "key=")) }

    @Test(
        """
        the API delivers the link once (a replay withholds it; no table, audit event or idempotency record holds \
        it); it sets a password once; a newer link or 24 h make it stop working
        """
    )
    func invitationLifecycle() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let partner = env.fixture.partners[0]
                let platform = try #require(env.fixture.tokens[.platformAdmin])
                let created = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"new.hire@green-grocer.example","role":"partner_staff"}"#,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(created.status == 201)
                let person = try created.decode(Components.Schemas.Operator.self)
                let idempotencyKey = UUID().uuidString
                let invited = try await client.call(
                    .post, "/v1/operators/\(person.id)/invitation", token: platform, json: #"{"show_link":true}"#,
                    headers: ["Idempotency-Key": idempotencyKey])
                #expect(invited.status == 201)
                #expect(invited.headers[.cacheControl] == "no-store")
                let link = try #require(try invited.decode(Components.Schemas.InvitationCreated.self).linkPath)
                let secret = try key(link)
                let replay = try await client.call(
                    .post, "/v1/operators/\(person.id)/invitation", token: platform, json: #"{"show_link":true}"#,
                    headers: ["Idempotency-Key": idempotencyKey])
                let replayed = try replay.decode(Components.Schemas.InvitationCreated.self)
                #expect(
                    replayed.linkPath == nil && replayed.linkAlreadyDelivered == true, "a replay withholds the link")
                for table in ["operator_invitations", "audit_events", "idempotency_keys"] {
                    let holding = try await env.ownerScalar(
                        "SELECT count(*) FROM \(table) t WHERE t::text LIKE '%\(secret)%'", as: Int64.self)
                    #expect(holding == 0, "\(table) does not hold the link's secret")
                }
                #expect(try await env.auditCount("operators.invite") == 1, "one invitation; the replay is not another")

                var browser = ConsoleClient(client)
                let page = try await browser.get(link)
                #expect(page.status == 200 && page.text.contains("new.hire@green-grocer.example"))
                let short = try await browser.post(
                    "/console/invitation", ["key": secret, "password": "short", "confirm_password": "short"], csrf: nil)
                #expect(short.status == 422 && short.text.contains("id=\"password-error\""))
                let mismatch = try await browser.post(
                    "/console/invitation",
                    [
                        "key": secret, "password": "a long enough passphrase",
                        "confirm_password": "another one entirely",
                    ],
                    csrf: nil)
                #expect(mismatch.status == 422 && mismatch.text.contains("id=\"confirm_password-error\""))
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM operator_passwords WHERE operator_id = '\(person.id)'", as: Int64.self)
                        == 0)
                let accepted = try await browser.post(
                    "/console/invitation",
                    [
                        "key": secret, "password": "a long enough passphrase",
                        "confirm_password": "a long enough passphrase",
                    ],
                    csrf: nil)
                #expect(accepted.status == 303 && accepted.location == "/console/sign-in?welcome=1")
                #expect(try await env.auditCount("operators.invitation_accepted") == 1)
                let signedIn = try await browser.signIn("new.hire@green-grocer.example", "a long enough passphrase")
                #expect(signedIn.location == "/console/home", "the password signs in")
                let again = try await ConsoleClient(client).post(
                    "/console/invitation",
                    [
                        "key": secret, "password": "yet another passphrase",
                        "confirm_password": "yet another passphrase",
                    ],
                    csrf: nil)
                #expect(again.status == 404 && again.text.contains("This link no longer works"), "a link works once")

                // A newer link replaces an unused one; a link is good for 24 hours.
                let first = try key(
                    try #require(
                        try await client.call(
                            .post, "/v1/operators/\(person.id)/invitation", token: platform,
                            json: #"{"show_link":true}"#
                        )
                        .decode(Components.Schemas.InvitationCreated.self).linkPath))
                let second = try key(
                    try #require(
                        try await client.call(
                            .post, "/v1/operators/\(person.id)/invitation", token: platform,
                            json: #"{"show_link":true}"#
                        )
                        .decode(Components.Schemas.InvitationCreated.self).linkPath))
                #expect(
                    try await ConsoleClient(client).get("/console/invitation?key=\(first)").status == 404, "superseded")
                #expect(try await ConsoleClient(client).get("/console/invitation?key=\(second)").status == 200)
                env.clock.advance(by: 24 * 3600 + 1)
                #expect(
                    try await ConsoleClient(client).get("/console/invitation?key=\(second)").status == 404, "expired")
            }
        }
    }

    @Test(
        """
        a partner admin invites a person from the People page (emailed: the page says to whom, masked); a \
        platform admin may have a link shown instead (https only behind a trusted proxy); disabling is confirmed; \
        staff have no People page
        """
    )
    func peoplePage() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp(trustedProxies: [try CIDR("10.0.0.0/8")]) { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let page = try await admin.get("/console/people")
                #expect(page.status == 200)
                let refused = try await admin.post(
                    "/console/people/new", ["email": "not an email", "role": "partner_staff"], csrf: page.csrf)
                #expect(refused.status == 422 && refused.text.contains("id=\"email-error\""))
                let invited = try await admin.post(
                    "/console/people/new", ["email": "picker@green-grocer.example", "role": "partner_staff"],
                    csrf: page.csrf)
                #expect(invited.status == 303 && invited.location == "/console/people")
                #expect(
                    invited.setCookies.contains { $0.contains("p%E2%80%A6%40green%2Dgrocer%2Eexample") },
                    "the flash says to whom")
                #expect(
                    try await env.ownerScalar("SELECT recipient FROM outbox WHERE kind = 'invitation'", as: String.self)
                        == "picker@green-grocer.example")
                _ = try await admin.post(
                    "/console/people/new", ["email": "packer@green-grocer.example", "role": "partner_staff"],
                    csrf: page.csrf)
                let packerID = try #require(
                    try await env.ownerScalar(
                        "SELECT id::text FROM operators WHERE email = 'packer@green-grocer.example'", as: String.self))
                let platform = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.platformAdmin]?.operatorID)
                let platformPage = try await platform.get("/console/people")
                #expect(platformPage.text.contains("Show a link here instead"))
                let unproxied = try await platform.post(
                    "/console/people/\(packerID)/invite", ["show_link": "yes"], csrf: platformPage.csrf,
                    headers: ["X-Forwarded-Proto": "https"])
                #expect(
                    unproxied.status == 200 && unproxied.text.contains("/console/invitation?key="),
                    "the link, shown once")
                #expect(
                    unproxied.text.contains("http://localhost/console/invitation?key=")
                        && !unproxied.text.contains("https://"),
                    "a client that is no trusted proxy does not make the link https")
                let personID = try #require(
                    try await env.ownerScalar(
                        "SELECT id::text FROM operators WHERE email = 'picker@green-grocer.example'", as: String.self))
                let unconfirmed = try await admin.post(
                    "/console/people/\(personID)/disable", ["reason": "Left"], csrf: page.csrf)
                #expect(unconfirmed.status == 422)
                let disabled = try await admin.post(
                    "/console/people/\(personID)/disable", ["reason": "Left", "confirm": "yes"], csrf: page.csrf)
                #expect(disabled.status == 303)
                #expect(
                    try await env.ownerScalar("SELECT status FROM operators WHERE id = '\(personID)'", as: String.self)
                        == "disabled")
                let staffID = try await env.ownerScalar(
                    """
                    SELECT id FROM operators WHERE tenant_id = '\(env.fixture.partners[0].tenantID)' AND role = \
                    'partner_staff' AND status = 'active' LIMIT 1
                    """,
                    as: UUID.self)
                let staff = try await ConsoleClient.signedIn(env, client, as: staffID)
                #expect(try await staff.get("/console/people").status == 403)
            }
        }
    }
}
