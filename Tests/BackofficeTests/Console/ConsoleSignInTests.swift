import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console sign-in and sessions: one answer for every refusal, lockout, hashed sessions, timeouts, audited")
struct ConsoleSignInTests {
    @Test("a password must be 12 to 128 characters and not one of the 10,000 common ones (any case)")
    func passwordRules() throws {
        // 10,000 lines, a few equal once lower-cased.
        #expect(
            PasswordRules.common.count > 9_900 && PasswordRules.common.contains("password")
                && PasswordRules.common.contains("qwerty"))
        for refused in ["short", "password1234", "PASSWORD1234", String(repeating: "x", count: 129)] {
            #expect(throws: DomainError.self, "\(refused)") { try PasswordRules.check(refused) }
        }
        try PasswordRules.check("correct horse battery staple")
    }

    @Test(
        """
        signing in sets an HttpOnly, SameSite=Strict session cookie whose secret the database never holds, and \
        goes back to the page asked for; the sign-in is audited with the session
        """
    )
    func signIn() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let (email, password) = try await env.consolePassword(for: try #require(partner.admin.operatorID))
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                let first = try await browser.get("/console/goods")
                #expect(first.status == 303)
                #expect(first.location == "/console/sign-in?next=%2Fconsole%2Fgoods")
                let reply = try await browser.signIn(email, password, next: "/console/goods")
                #expect(reply.status == 303)
                #expect(reply.location == "/console/goods")
                let cookie = try #require(reply.setCookies.first { $0.hasPrefix("console_session=") })
                #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
                let secret = try #require(browser.cookie?.dropFirst("console_session=".count))
                let stored = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM console_sessions WHERE secret_hash = sha256('\(secret)'::bytea) AND \
                    operator_id = '\(partner.admin.operatorID!)'
                    """,
                    as: Int64.self)
                #expect(stored == 1, "the session is stored by its hash")
                let leaked = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM console_sessions s WHERE (SELECT string_agg(t::text, '') FROM \
                    console_sessions t) LIKE '%\(secret)%'
                    """,
                    as: Int64.self)
                #expect(leaked == 0, "no row holds the secret itself")
                let goods = try await browser.get("/console/goods")
                #expect(goods.status == 200)
                #expect(goods.text.contains("<h1>Goods</h1>"))
                let event = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'sessions.sign_in' AND session_id IS NOT \
                    NULL AND actor_id = '\(partner.admin.operatorID!)'
                    """,
                    as: Int64.self)
                #expect(event == 1)
            }
        }
    }

    @Test(
        """
        a wrong password, an unknown email and a disabled operator get the same answer; each is audited; after \
        the policy's failures even the right password is refused until they age out
        """
    )
    func refusalsAndLockout() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[1]
            let (email, password) = try await env.consolePassword(for: try #require(partner.admin.operatorID))
            let limit = env.policies.console.maxFailuresPerAccount
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                let wrong = try await browser.signIn(email, "not the password at all")
                let unknown = try await browser.signIn("nobody@nowhere.example", "not the password at all")
                #expect(wrong.status == 401 && unknown.status == 401)
                #expect(
                    wrong.text == unknown.text.replacingOccurrences(of: "nobody@nowhere.example", with: email),
                    "one answer for both")
                #expect(browser.cookie == nil)
                for _ in 1..<limit { _ = try await browser.signIn(email, "still not the password") }
                #expect(try await env.auditCount("sessions.locked_out") == 1)
                let locked = try await browser.signIn(email, password)
                #expect(locked.status == 401, "locked out: the right password is refused too")
                #expect(browser.cookie == nil)
                #expect(
                    try await env.auditCount("sessions.sign_in_failed") == Int64(limit + 1),
                    "the refusal while locked out is not audited again")
                env.clock.advance(by: Double(env.policies.console.failureWindowMinutes * 60 + 1))
                let later = try await browser.signIn(email, password)
                #expect(later.status == 303, "the failures aged out")
                #expect(browser.cookie != nil)
            }
            try await env.asOwner("UPDATE operators SET status = 'disabled' WHERE id = '\(partner.admin.operatorID!)'")
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                let refused = try await browser.signIn(email, password)
                #expect(refused.status == 401, "a disabled operator cannot sign in")
            }
        }
    }

    @Test(
        """
        a session idle past the policy, or of an operator disabled since, or signed out, no longer opens pages: \
        sign-in, and back after it
        """
    )
    func sessionsEnd() async throws {
        try await TestEnvironment.with { env in
            let operatorID = try #require(env.fixture.partners[0].admin.operatorID)
            let (email, password) = try await env.consolePassword(for: operatorID)
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                _ = try await browser.signIn(email, password)
                #expect(try await browser.get("/console/goods").status == 200)
                let idle = env.policies.console.idleTimeoutMinutes
                try await env.asOwner(
                    "UPDATE console_sessions SET last_seen_at = now() - interval '\(idle + 1) minutes'")
                let expired = try await browser.get("/console/goods?status=draft")
                #expect(expired.status == 303)
                #expect(expired.location == "/console/sign-in?next=%2Fconsole%2Fgoods%3Fstatus%3Ddraft&ended=1")
                let back = try await browser.signIn(email, password, next: "/console/goods?status=draft")
                #expect(back.location == "/console/goods?status=draft")
                let page = try await browser.get("/console/home")
                let csrf = try #require(page.csrf)
                let out = try await browser.post("/console/sign-out", [:], csrf: csrf)
                #expect(out.status == 303)
                #expect(out.setCookies.contains { $0.hasPrefix("console_session=;") && $0.contains("Max-Age=0") })
                #expect(try await browser.get("/console/home").status == 303, "the ended session opens nothing")
                _ = try await browser.signIn(email, password)
                #expect(try await browser.get("/console/home").status == 200)
                try await env.asOwner("UPDATE operators SET status = 'disabled' WHERE id = '\(operatorID)'")
                #expect(
                    try await browser.get("/console/home").status == 303,
                    "disabling the operator ends its sessions at once")
            }
            #expect(try await env.auditCount("sessions.sign_out") == 1)
        }
    }

    @Test("setting a new password ends the operator's open sessions")
    func passwordResetEndsSessions() async throws {
        try await TestEnvironment.with { env in
            let operatorID = try #require(env.fixture.partners[0].admin.operatorID)
            try await env.withApp { client in
                let browser = try await ConsoleClient.signedIn(env, client, as: operatorID)
                #expect(try await browser.get("/console/home").status == 200)
                _ = try await env.consolePassword(for: operatorID, password: "another long passphrase")
                #expect(try await browser.get("/console/home").status == 303)
            }
        }
    }
}
