import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite(
    """
    Sign-in at the door: lockouts hold under concurrency and floods, one form of an email, links reach only their \
    owner
    """
)
struct ConsoleSignInDoorTests {
    /// Sends `count` sign-ins at once; their statuses.
    private func burst(
        _ client: any TestClientProtocol, count: Int,
        _ attempt: @escaping @Sendable (Int) -> (email: String, password: String),
        headers: @escaping @Sendable (Int) -> [String: String] = { _ in [:] }
    ) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count {
                group.addTask {
                    let (email, password) = attempt(index)
                    return try await ConsoleClient(client).post(
                        "/console/sign-in", ["email": email, "password": password, "next": "/console/home"], csrf: nil,
                        headers: headers(index)
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func failures(_ env: TestEnvironment, reason: String) async throws -> Int64 {
        try await env.ownerScalar(
            "SELECT count(*) FROM audit_events WHERE action = 'sessions.sign_in_failed' AND reason = '\(reason)'",
            as: Int64.self) ?? 0
    }

    @Test(
        """
        30 wrong passwords for one email sent at once: at most the policy's 5 are checked, one lockout is \
        audited, and the right password is refused after
        """
    )
    func lockoutUnderConcurrency() async throws {
        try await TestEnvironment.with { env in
            let (email, password) = try await env.consolePassword(
                for: try #require(env.fixture.partners[0].admin.operatorID))
            let limit = env.policies.console.maxFailuresPerAccount
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 64, passwordCost: 4, refusalDelay: .zero
            )
            try await env.withApp(signInGate: gate) { client in
                let statuses = try await burst(client, count: 30) { _ in (email, "not the password at all") }
                #expect(statuses.allSatisfy { $0 == 401 }, "every one refused alike: \(statuses)")
                #expect(gate.checksRun == limit, "only \(limit) passwords were checked, not \(gate.checksRun)")
                #expect(try await failures(env, reason: "wrong_password") == Int64(limit))
                #expect(try await env.auditCount("sessions.locked_out") == 1)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM console_sign_in_failures", as: Int64.self)
                        == Int64(limit))
                var browser = ConsoleClient(client)
                let right = try await browser.signIn(email, password)
                #expect(right.status == 401 && browser.cookie == nil, "locked out: the right password is refused")
                #expect(gate.checksRun == limit, "a locked email costs no password check")
                #expect(
                    try await env.auditCount("sessions.sign_in_failed") == Int64(limit),
                    "refusals while locked out are not audited one by one")
            }
        }
    }

    @Test(
        """
        two server processes (each its own memory) share one database's count: 30 wrong passwords split between \
        them get 5 checks in all
        """
    )
    func lockoutAcrossProcesses() async throws {
        try await TestEnvironment.with { env in
            let (email, password) = try await env.consolePassword(
                for: try #require(env.fixture.partners[0].admin.operatorID))
            let gates = (0..<2).map { _ in
                SignInGate(
                    secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 64, passwordCost: 4,
                    refusalDelay: .zero)
            }
            try await env.withApp(signInGate: gates[0]) { first in
                try await env.withApp(signInGate: gates[1]) { second in
                    async let a = burst(first, count: 15) { _ in (email, "not the password at all") }
                    async let b = burst(second, count: 15) { _ in (email, "not the password at all") }
                    let statuses = try await a + b
                    #expect(statuses.allSatisfy { $0 == 401 })
                    #expect(
                        gates[0].checksRun + gates[1].checksRun == 5,
                        "checks: \(gates[0].checksRun) + \(gates[1].checksRun)")
                    #expect(try await env.auditCount("sessions.locked_out") == 1)
                    var browser = ConsoleClient(second)
                    #expect(try await browser.signIn(email, password).status == 401, "locked out in both")
                    browser = ConsoleClient(first)
                    #expect(try await browser.signIn(email, password).status == 401)
                }
            }
        }
    }

    @Test(
        """
        16 right passwords for one email at once: past the limit some wait their turn (refused), but nobody is \
        locked out after
        """
    )
    func burstOfRightPasswords() async throws {
        try await TestEnvironment.with { env in
            let (email, password) = try await env.consolePassword(
                for: try #require(env.fixture.partners[0].admin.operatorID))
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 64, passwordCost: 4, refusalDelay: .zero
            )
            try await env.withApp(signInGate: gate) { client in
                let statuses = try await burst(client, count: 16) { _ in (email, password) }
                #expect(statuses.contains(303) && Set(statuses).isSubset(of: [303, 401]), "\(statuses)")
                #expect(try await env.auditCount("sessions.locked_out") == 0)
                var browser = ConsoleClient(client)
                #expect(try await browser.signIn(email, password).status == 303, "right passwords lock no one out")
            }
        }
    }

    @Test(
        """
        30 sign-ins at once for 30 emails from one address: at most the policy's 20 are checked, then the address \
        is locked
        """
    )
    func addressLockoutUnderConcurrency() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.console.maxFailuresPerAddress
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 64, passwordCost: 4, refusalDelay: .zero
            )
            try await env.withApp(signInGate: gate) { client in
                let statuses = try await burst(client, count: 30) { index in
                    ("nobody\(index)@nowhere.example", "not the password at all")
                }
                #expect(statuses.allSatisfy { $0 == 401 })
                #expect(gate.checksRun == limit)
                #expect(try await failures(env, reason: "unknown_email") == Int64(limit))
                #expect(try await env.auditCount("sessions.locked_out") == 1)
            }
        }
    }

    @Test(
        """
        a flood after a lockout costs nothing: no check, no row, no audit event; when the checks are full a \
        sign-in is 503 with Retry-After and is not counted
        """
    )
    func floodAndBusy() async throws {
        try await TestEnvironment.with { env in
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 64, passwordCost: 4, refusalDelay: .zero
            )
            try await env.withApp(signInGate: gate) { client in
                _ = try await burst(client, count: 25) { index in
                    ("junk\(index)@nowhere.example", "not the password at all")
                }
                let (events, rows, checks) = (
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int64.self),
                    try await env.ownerScalar("SELECT count(*) FROM console_sign_in_failures", as: Int64.self),
                    gate.checksRun
                )
                let flood = try await burst(client, count: 200) { index in
                    ("flood\(index)@nowhere.example", "not the password at all")
                }
                #expect(flood.allSatisfy { $0 == 401 })
                #expect(gate.checksRun == checks, "no password check for a locked address")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int64.self) == events,
                    "no audit event per refusal")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM console_sign_in_failures", as: Int64.self) == rows,
                    "no row either")
            }
        }
        try await TestEnvironment.with { env in
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 1, passwordCost: 4, refusalDelay: .zero)
            try await env.withApp(signInGate: gate) { client in
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for index in 0..<12 {
                        group.addTask {
                            try await ConsoleClient(client).post(
                                "/console/sign-in",
                                ["email": "busy\(index)@nowhere.example", "password": "not the password at all"],
                                csrf: nil)
                        }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                let statuses = replies.map(\.status)
                let busy = replies.filter { reply in reply.status == 503 }
                #expect(!busy.isEmpty, "one check at a time: some of 12 at once wait for none")
                #expect(busy.allSatisfy { $0.headers[.retryAfter] == "2" && $0.text.contains("Sign-in is busy") })
                let refused = statuses.count { $0 == 401 }
                #expect(refused + busy.count == 12, "\(statuses)")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM console_sign_in_failures", as: Int64.self)
                        == Int64(refused),
                    "a sign-in answered busy is not counted")
            }
        }
    }

    @Test("30 wrong codes at once in the second-factor step: at most the policy's 5 are checked, and the step ends")
    func secondFactorUnderConcurrency() async throws {
        try await TestEnvironment.with { env in
            let operatorID = try #require(env.fixture.principals[.backendManager]?.operatorID)
            let (email, password) = try await env.consolePassword(for: operatorID)
            _ = try await env.secondFactor(for: operatorID)
            let limit = env.policies.console.maxFailuresPerAccount
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                let started = try await browser.signIn(email, password)
                #expect(started.location?.hasPrefix("/console/sign-in/code") == true)
                let csrf = try #require(try await browser.get("/console/sign-in/code").csrf)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<30 {
                        group.addTask { [browser] in
                            try await browser.post("/console/sign-in/code", ["code": "000000"], csrf: csrf).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.count == 30)
                #expect(try await env.auditCount("sessions.sign_in") == 0, "no wrong code passes")
                #expect(try await failures(env, reason: "wrong_code") <= Int64(limit), "at most \(limit) codes checked")
                #expect(try await env.auditCount("sessions.locked_out") == 1)
                #expect(try await browser.get("/console/sign-in/code").status == 303, "the step has ended")
            }
        }
    }

    @Test(
        """
        Unicode and case variants of an email count as one: five failures under variants lock the email; U+0130 \
        does not sign in to its ASCII look-alike
        """
    )
    func emailVariants() async throws {
        #expect(EmailAddress.normalised(" Admin@Example.COM ") == "admin@example.com")
        #expect(EmailAddress.normalised("ａｄｍｉｎ@example.com") == "admin@example.com", "full-width letters fold (NFKC)")
        #expect(EmailAddress.normalised("admİn@example.com") != "admin@example.com", "U+0130 is not the letter i")
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aAİıiIßẞﬁＡｂ\u{301}é e\u{0307}@.Ωω") as [Character]
        for _ in 0..<2_000 {
            let text = String(
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(
                EmailAddress.normalised(EmailAddress.normalised(text)) == EmailAddress.normalised(text),
                "idempotent on \(text)")
        }
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let created = try await env.withApp { client in
                try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"  Admin@Green-Grocer.Example ","role":"partner_staff"}"#)
            }
            #expect(created.status == 201)
            let person = try created.decode(Components.Schemas.Operator.self)
            #expect(person.email == "admin@green-grocer.example", "stored normalised")
            let (_, password) = try await env.consolePassword(for: try #require(UUID(uuidString: person.id)))
            try await env.withApp { client async throws in
                var browser = ConsoleClient(client)
                #expect(
                    try await browser.signIn("admİn@green-grocer.example", password).status == 401,
                    "U+0130 is another email")
                browser.cookie = nil
                #expect(
                    try await browser.signIn("ADMIN@green-grocer.example", password).status == 303,
                    "case does not matter")
                browser.cookie = nil
                for variant in [
                    "Admin@green-grocer.example", "ＡＤＭＩＮ@green-grocer.example", "admin@GREEN-grocer.example",
                    "aDmin@green-grocer.example", " admin@green-grocer.example",
                ] {
                    #expect(try await browser.signIn(variant, "not the password at all").status == 401)
                }
                #expect(
                    try await env.auditCount("sessions.locked_out") == 1, "five variants are five failures of one email"
                )
                #expect(try await browser.signIn("admin@green-grocer.example", password).status == 401, "locked out")
            }
        }
    }

    @Test(
        """
        whoever knows an operator's email cannot lock the owner out: five failures from 127.0.0.2 lock that address \
        for the email (even the right password is refused there, once audited); from 127.0.0.3 the owner signs in, \
        slowed; after twenty more failures from four other addresses still signs in, slowed more; one notice mailed
        """
    )
    func emailNeverLockedFromElsewhere() async throws {
        try await TestEnvironment.with { env in
            let operatorID = try #require(env.fixture.partners[0].admin.operatorID)
            let (email, password) = try await env.consolePassword(for: operatorID)
            let step = Duration.milliseconds(100)
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, passwordCost: 4, refusalDelay: .zero, slowStep: step)
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")], signInGate: gate) { client in
                func attempt(_ password: String, from address: String) async throws -> (Int, Duration) {
                    let started = ContinuousClock.now
                    let reply = try await ConsoleClient(client).post(
                        "/console/sign-in", ["email": email, "password": password], csrf: nil,
                        headers: ["X-Forwarded-For": address])
                    return (reply.status, ContinuousClock.now - started)
                }
                for _ in 0..<5 { #expect(try await attempt("not the password at all", from: "127.0.0.2").0 == 401) }
                #expect(try await env.auditCount("sessions.locked_out") == 1)
                #expect(try await attempt(password, from: "127.0.0.2").0 == 401, "that address is locked for the email")
                let owner = try await attempt(password, from: "127.0.0.3")
                #expect(owner.0 == 303, "the owner, elsewhere, signs in")
                #expect(owner.1 >= step, "slowed by the failures elsewhere: \(owner.1)")
                for address in ["127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"] {
                    for _ in 0..<5 { _ = try await attempt("not the password at all", from: address) }
                }
                #expect(try await env.auditCount("sessions.locked_out") == 5, "each address locked for the email")
                let again = try await attempt(password, from: "127.0.0.3")
                #expect(again.0 == 303, "never locked out, after 25 failures from five addresses")
                #expect(again.1 >= step * 16, "slowed at most sixteen steps: \(again.1)")
            }
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM outbox WHERE kind = 'lockout_notice'", as: Int64.self)
                    == 1, "one notice to the owner")
        }
    }

    @Test("per-address limits count an IPv6 address's /64 as one address (behind a trusted proxy)")
    func ipv6Slash64() async throws {
        try await TestEnvironment.with { env in
            let (email, password) = try await env.consolePassword(
                for: try #require(env.fixture.partners[0].admin.operatorID))
            let limit = env.policies.console.maxFailuresPerAddress
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                // One after another: what this test shows is the /64 counted as one address (the floods have tests of
                // their own), and the live test client gives each answer 20 s, which 20 queued bcrypt checks on a
                // loaded machine can exceed.
                var statuses: [Int] = []
                for index in 0..<limit {
                    statuses.append(
                        try await ConsoleClient(client).post(
                            "/console/sign-in",
                            ["email": "v6-\(index)@nowhere.example", "password": "not the password at all"], csrf: nil,
                            headers: ["X-Forwarded-For": "2001:db8:0:0:\(String(index + 1, radix: 16))::1"]
                        ).status)
                }
                #expect(statuses.allSatisfy { $0 == 401 })
                #expect(
                    try await env.auditCount("sessions.locked_out") == 1, "twenty addresses of one /64 are one address")
                let sameNetwork = ConsoleClient(client)
                let refused = try await sameNetwork.post(
                    "/console/sign-in", ["email": email, "password": password], csrf: nil,
                    headers: ["X-Forwarded-For": "2001:db8::abcd:1"])
                #expect(refused.status == 401, "another host of the /64 is locked out too")
                let other = try await sameNetwork.post(
                    "/console/sign-in", ["email": email, "password": password], csrf: nil,
                    headers: ["X-Forwarded-For": "2001:db8:0:1::1"])
                #expect(other.status == 303, "the next /64 is not")
            }
        }
    }

    @Test(
        """
        a failed sign-in keeps no typed email (a keyed digest of it), and maintenance purge removes attempts \
        older than the window
        """
    )
    func failuresKeepNoEmail() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                _ = try await browser.signIn("my secret passphrase typed here", "oops")
                _ = try await browser.signIn("someone@nowhere.example", "not the password at all")
            }
            let holding = try await env.ownerScalar(
                """
                SELECT count(*) FROM console_sign_in_failures f WHERE f::text ILIKE '%passphrase%' OR f::text \
                ILIKE '%nowhere%'
                """,
                as: Int64.self)
            #expect(holding == 0, "no row holds what was typed")
            #expect(try await env.ownerScalar("SELECT count(*) FROM console_sign_in_failures", as: Int64.self) == 2)
            env.clock.advance(by: Double(env.policies.console.failureWindowMinutes * 60 + 1))
            let purged = try await env.database.run(
                PurgeExpiredData(dryRun: false), context: env.context(.platformAdmin))
            #expect(purged.signInAttempts == 2)
            #expect(try await env.ownerScalar("SELECT count(*) FROM console_sign_in_failures", as: Int64.self) == 0)
        }
    }

    @Test(
        """
        a partner admin never holds a fellow admin's sign-in link (API and console: it is emailed to the fellow \
        admin); an unknown but well-formed invitation key costs no password work
        """
    )
    func peerAdminLinks() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"co.admin@green-grocer.example","role":"partner_admin"}"#)
                let peer = try created.decode(Components.Schemas.Operator.self)
                _ = try await env.consolePassword(for: try #require(UUID(uuidString: peer.id)))
                let takeover = try await client.call(
                    .post, "/v1/operators/\(peer.id)/invitation", token: partner.adminToken)
                #expect(
                    takeover.status == 201 && !takeover.text.contains("key="),
                    "the link is not in the answer: \(takeover.text)")
                let console = try await ConsoleClient.signedIn(env, client, as: partner.admin.operatorID)
                let page = try await console.get("/console/people")
                let viaConsole = try await console.post("/console/people/\(peer.id)/invite", [:], csrf: page.csrf)
                #expect(
                    viaConsole.status == 303 && !viaConsole.text.contains("invitation?key="),
                    "nor on the console's page")
                let mailed = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM outbox WHERE kind = 'invitation' AND recipient = \
                    'co.admin@green-grocer.example'
                    """,
                    as: Int64.self)
                #expect(mailed == 2, "both links went to the fellow admin's mailbox")
            }
        }
        try await TestEnvironment.with { env in
            let gate = SignInGate(
                secondFactorKey: TestEnvironment.secondFactorKey, checksAtOnce: 64, passwordCost: 4, refusalDelay: .zero
            )
            try await env.withApp(signInGate: gate) { client in
                let unknown = SessionSecret.generate().value
                let reply = try await ConsoleClient(client).post(
                    "/console/invitation",
                    [
                        "key": unknown, "password": "a long enough passphrase",
                        "confirm_password": "a long enough passphrase",
                    ],
                    csrf: nil)
                #expect(reply.status == 404)
                #expect(gate.checksRun == 0, "no bcrypt for a link that is not open")
            }
        }
    }

    @Test(
        """
        over TLS only the __Host- cookie is read and HSTS is sent; a foreign Origin on sign-in or invitation is \
        403; a password over 72 bytes is refused by name
        """
    )
    func cookiesAndHeaders() async throws {
        #expect(throws: DomainError.self) { try PasswordRules.check(String(repeating: "é", count: 40)) }
        do {
            try PasswordRules.check(String(repeating: "é", count: 40))
        } catch DomainError.invalid(let issues) {
            #expect(issues.first?.code == "too_long" && issues.first?.message.contains("72 bytes") == true)
        }
        try await TestEnvironment.with { env in
            let (email, password) = try await env.consolePassword(
                for: try #require(env.fixture.partners[0].admin.operatorID))
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                let tls = ["X-Forwarded-Proto": "https"]
                let signedIn = try await ConsoleClient(client).post(
                    "/console/sign-in", ["email": email, "password": password], csrf: nil, headers: tls)
                #expect(signedIn.status == 303)
                #expect(signedIn.headers[.init("Strict-Transport-Security")!]?.hasPrefix("max-age=31536000") == true)
                let cookie = try #require(signedIn.setCookies.first { $0.hasPrefix("__Host-console_session=") })
                let secret = String(cookie.dropFirst("__Host-console_session=".count).prefix { $0 != ";" })
                let hostCookie = ConsoleClient(client, cookie: "__Host-console_session=\(secret)")
                #expect(try await hostCookie.send(.get, "/console/home", headers: tls).status == 200)
                let planted = ConsoleClient(client, cookie: "console_session=\(secret)")
                #expect(
                    try await planted.send(.get, "/console/home", headers: tls).status == 303,
                    "a plain cookie is not read over TLS")
                #expect(
                    try await planted.send(.get, "/console/home").headers[.init("Strict-Transport-Security")!] == nil,
                    "no HSTS over plain HTTP")
                for path in ["/console/sign-in", "/console/invitation"] {
                    let foreign = try await ConsoleClient(client).post(
                        path, ["email": email, "password": password, "key": "x"], csrf: nil,
                        headers: ["Origin": "https://evil.example"])
                    #expect(foreign.status == 403, "\(path): a foreign origin is refused, not a server error")
                }
            }
        }
    }

    @Test(
        """
        an idempotency fingerprint is never of an empty body: a request that does not encode throws; cursors \
        round-trip any text
        """
    )
    func encodingsThrow() throws {
        struct Unencodable: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        #expect(throws: EncodingError.self) { try Idempotency.fingerprint(operationID: "x", request: Unencodable()) }
        for parts in [["2026-11-26T23:18:12.123456Z", "6f1c…"], ["quote \" and \\ and \u{1} and é"], []] {
            #expect(try Cursor.decode(Cursor.encode(parts), count: parts.count) == parts)
        }
    }
}
