import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console second factor: enrolment with a QR code, codes accepted once, recovery codes, lockout, sealed at rest")
struct ConsoleSecondFactorTests {
    /// The hidden field or element text that follows `marker` on a page, up to `end`.
    private func value(after marker: String, in text: String, end: Character = "\"") throws -> String {
        let range = try #require(text.range(of: marker), "\(marker) on the page")
        return String(text[range.upperBound...].prefix { $0 != end })
    }

    @Test(
        """
        a manager's first sign-in sets up the second factor: no page before it, a wrong code refused in place, \
        then ten recovery codes shown once and a new session; the secret is sealed at rest; the next sign-in asks \
        for a code, accepted once
        """
    )
    func enrolAtFirstSignIn() async throws {
        try await TestEnvironment.with { env in
            let managerID = try #require(env.fixture.principals[.backendManager]?.operatorID)
            let (email, password) = try await env.consolePassword(for: managerID)
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                let started = try await browser.signIn(email, password, next: "/console/accounts")
                #expect(started.status == 303)
                #expect(started.location == "/console/sign-in/enrol?next=/console/accounts")
                let pendingCookie = browser.cookie
                #expect(
                    try await browser.get("/console/accounts").status == 303,
                    "a session in a sign-in step reaches no page")
                let page = try await browser.get("/console/sign-in/enrol?next=/console/accounts")
                #expect(page.status == 200)
                #expect(
                    page.text.contains("src=\"data:image/svg+xml;base64,"), "the QR code is an image the CSP allows")
                #expect(!page.text.contains("<nav"), "no navigation before the second factor")
                let secret = try #require(
                    TOTPSecret(
                        base32: try value(after: "<code class=\"secret\" id=\"totp-secret\">", in: page.text, end: "<"))
                )
                let sealed = try value(after: "name=\"sealed\" value=\"", in: page.text)
                #expect(
                    try value(after: "id=\"totp-uri\">", in: page.text, end: "<").contains("secret=\(secret.base32)"))
                let enrolledBefore = try await env.auditCount("operators.second_factor_enrolled")

                let wrong = try await browser.post(
                    "/console/sign-in/enrol", ["code": "000000", "sealed": sealed, "next": "/console/accounts"],
                    csrf: page.csrf)
                #expect(wrong.status == 422)
                #expect(wrong.text.contains("is not the current code") && wrong.text.contains("aria-invalid=\"true\""))
                #expect(
                    try await env.auditCount("operators.second_factor_enrolled") == enrolledBefore,
                    "a wrong code changes nothing")
                let stored = "SELECT count(*) FROM operator_second_factors WHERE operator_id = '\(managerID)'"
                #expect(try await env.ownerScalar(stored, as: Int64.self) == 0)

                let now = env.clock.now()
                let right = try await browser.post(
                    "/console/sign-in/enrol",
                    ["code": secret.code(at: now), "sealed": sealed, "next": "/console/accounts"], csrf: page.csrf)
                #expect(right.status == 200)
                let codes = right.text.components(separatedBy: "<li><code>").dropFirst().map {
                    String($0.prefix { $0 != "<" })
                }
                #expect(codes.count == 10 && Set(codes).count == 10 && codes.allSatisfy(RecoveryCodes.looksLikeCode))
                browser.keepSession(right)
                #expect(browser.cookie != pendingCookie, "the session's id rotates")
                #expect(try await browser.get("/console/accounts").status == 200)
                #expect(
                    try await ConsoleClient(client, cookie: pendingCookie).get("/console/accounts").status == 303,
                    "the step's session ended")
                #expect(try await env.auditCount("operators.second_factor_enrolled") == enrolledBefore + 1)
                #expect(try await env.ownerScalar(stored, as: Int64.self) == 1)
                let plain = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM operator_second_factors WHERE position(convert_to('\(secret.text)', \
                    'UTF8') IN sealed_secret) > 0
                    """,
                    as: Int64.self)
                #expect(plain == 0, "the secret is stored sealed")
                let codeHashes = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM operator_recovery_codes WHERE operator_id = '\(managerID)' AND used_at \
                    IS NULL
                    """,
                    as: Int64.self)
                #expect(codeHashes == 10)

                // The next sign-in asks for a code; the code used to enrol is not accepted again (its step is spent).
                _ = try await browser.post("/console/sign-out", [:], csrf: try await browser.get("/console/home").csrf)
                let again = try await browser.signIn(email, password)
                #expect(again.location == "/console/sign-in/code?next=/console/home")
                let failuresBefore = try await env.auditCount("sessions.sign_in_failed")
                let replay = try await browser.passSecondFactor(secret.code(at: now))
                #expect(replay.status == 422)
                #expect(try await env.auditCount("sessions.sign_in_failed") == failuresBefore + 1)
                let signIns = try await env.auditCount("sessions.sign_in")
                env.clock.advance(by: 30)
                let next = try await browser.passSecondFactor(secret.code(at: env.clock.now()))
                #expect(next.status == 303 && next.location == "/console/home")
                #expect(try await browser.get("/console/home").status == 200)
                #expect(try await env.auditCount("sessions.sign_in") == signIns + 1)

                // A recovery code signs in once.
                _ = try await browser.post("/console/sign-out", [:], csrf: try await browser.get("/console/home").csrf)
                _ = try await browser.signIn(email, password)
                let recovered = try await browser.passSecondFactor(codes[3].uppercased())
                #expect(recovered.status == 303, "a recovery code, any case")
                _ = try await browser.post("/console/sign-out", [:], csrf: try await browser.get("/console/home").csrf)
                _ = try await browser.signIn(email, password)
                #expect(try await browser.passSecondFactor(codes[3]).status == 422, "a recovery code works once")
                let security = try await ConsoleClient.signedIn(env, client, as: managerID).get("/console/security")
                #expect(security.text.contains("Set up a second factor") == false)
            }
        }
    }

    @Test(
        """
        a partner admin may set up a second factor from the Security page; wrong codes count toward the lockout, \
        the one that reaches it ends the step, and then even the password is refused
        """
    )
    func optionalEnrolmentAndLockout() async throws {
        try await TestEnvironment.with { env in
            let adminID = try #require(env.fixture.partners[0].admin.operatorID)
            let (email, password) = try await env.consolePassword(for: adminID)
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                #expect(
                    try await browser.signIn(email, password).location == "/console/home",
                    "a partner role signs in without one")
                let security = try await browser.get("/console/security")
                let notifications = try #require(security.text.after(last: "id=\"notifications-heading\""))
                #expect(
                    notifications.contains("<strong>\(email)</strong>")
                        && notifications.contains("when 5 sign-ins to your account failed"),
                    "which mails it gets, and where")
                #expect(security.text.contains("Off: signing in asks only for your password."))
                let page = try await browser.get("/console/security/second-factor")
                let secret = try #require(
                    TOTPSecret(base32: try value(after: "id=\"totp-secret\">", in: page.text, end: "<")))
                let sealed = try value(after: "name=\"sealed\" value=\"", in: page.text)
                let enrolled = try await browser.post(
                    "/console/security/second-factor", ["code": secret.code(at: env.clock.now()), "sealed": sealed],
                    csrf: page.csrf)
                #expect(enrolled.status == 200 && enrolled.text.contains("Back to Security"))
                #expect(
                    try await browser.get("/console/security").text.contains("Recovery codes left: <strong>10</strong>")
                )

                // A sealed secret made for one operator does not enrol another.
                let other = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[1].admin.operatorID)
                let otherPage = try await other.get("/console/security/second-factor")
                let stolen = try await other.post(
                    "/console/security/second-factor", ["code": secret.code(at: env.clock.now()), "sealed": sealed],
                    csrf: otherPage.csrf)
                #expect(stolen.status == 403)

                _ = try await browser.post("/console/sign-out", [:], csrf: try await browser.get("/console/home").csrf)
                let lockouts = try await env.auditCount("sessions.locked_out")
                _ = try await browser.signIn(email, password)
                let stepCookie = browser.cookie
                for attempt in 1...4 {
                    #expect(
                        try await browser.passSecondFactor("12345\(attempt)").status == 422, "wrong code \(attempt)")
                }
                let fifth = try await browser.passSecondFactor("123455")
                #expect(fifth.status == 401, "the failure that reaches the limit ends the step")
                #expect(try await env.auditCount("sessions.locked_out") == lockouts + 1)
                #expect(
                    try await ConsoleClient(client, cookie: stepCookie).get("/console/sign-in/code").status == 303,
                    "the step's session ended")
                #expect(
                    try await browser.signIn(email, password).status == 401,
                    "locked out: the password alone is refused too")
            }
        }
    }
}

@Suite("TOTP, sealing and the QR encoder against published vectors")
struct SecondFactorUnitTests {
    @Test(
        """
        codes match RFC 6238's SHA-1 vectors (six digits, leading zeros kept); a code matches one step either \
        side, not two
        """
    )
    func totpVectors() throws {
        let secret = TOTPSecret(text: "12345678901234567890")
        #expect(secret.base32 == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(TOTPSecret(base32: "gezd gnbv gy3t qojq gezd gnbv gy3t qojq") == secret)
        #expect(secret.code(at: Date(timeIntervalSince1970: 59)) == "287082")
        #expect(secret.code(at: Date(timeIntervalSince1970: 1_111_111_109)) == "081804")
        #expect(secret.code(at: Date(timeIntervalSince1970: 2_000_000_000)) == "279037")
        let now = Date(timeIntervalSince1970: 1_111_111_109)
        #expect(secret.matchingStep("081804", now: now) == TOTPSecret.step(at: now))
        #expect(
            secret.matchingStep(secret.code(at: now.addingTimeInterval(30)), now: now) == TOTPSecret.step(at: now) + 1)
        #expect(secret.matchingStep(secret.code(at: now.addingTimeInterval(90)), now: now) == nil)
        #expect(secret.matchingStep("08180", now: now) == nil && secret.matchingStep("abcdef", now: now) == nil)
        #expect(TOTPSecret(base32: "not base32!") == nil)
    }

    @Test("a sealed secret opens only for its operator and under its key")
    func sealing() throws {
        let (key, text) = SecondFactorKey.generate()
        let secret = TOTPSecret.generate()
        let alice = UUID()
        let sealed = try key.seal(secret, for: alice)
        #expect(try SecondFactorKey(base64: text).open(sealed, for: alice) == secret)
        #expect(throws: (any Error).self) { try key.open(sealed, for: UUID()) }
        #expect(throws: (any Error).self) { try SecondFactorKey.generate().key.open(sealed, for: alice) }
        #expect(throws: SecondFactorKey.Invalid.self) { try SecondFactorKey(base64: "c2hvcnQ=") }
    }

    @Test("Reed-Solomon matches ISO/IEC 18004's worked example (version 1-M, '01234567')")
    func reedSolomon() {
        let data: [UInt8] = [
            0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11,
        ]
        #expect(
            ReedSolomon.remainder(data, degree: 10) == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    @Test("a QR code has its finder patterns, timing and format bits, in the smallest version that holds the text")
    func qrStructure() throws {
        let uri = TOTPSecret.generate().uri(account: "manager@healthtrack.example")
        let code = try QRCode(uri)
        #expect(
            code.size == 4 * 7 + 17 || code.size == 4 * 8 + 17,
            "an otpauth link fits version 7 or 8 at level M (\(uri.utf8.count) bytes)")
        for (x, y) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
            #expect(
                (0..<7).allSatisfy { code.modules[y][x + $0] && code.modules[y + 6][x + $0] }, "finder at \(x),\(y)")
            #expect(code.modules[y + 3][x + 3] && !code.modules[y + 1][x + 1])
        }
        #expect((8..<(code.size - 8)).allSatisfy { code.modules[6][$0] == ($0 % 2 == 0) }, "timing row")
        // Format bits: both copies agree and carry level M (00).
        let first = (0...5).map { code.modules[$0][8] } + [code.modules[7][8], code.modules[8][8], code.modules[8][7]]
        let second = (0..<8).map { code.modules[8][code.size - 1 - $0] }
        #expect(Array(first.prefix(8)) == second)
        let bits = (0..<15).map { i in i < 9 ? first[i] : code.modules[8][14 - i] }
        let format = bits.enumerated().reduce(0) { $0 | ($1.element ? 1 << $1.offset : 0) } ^ 0x5412
        #expect(format >> 13 == 0, "error correction level M")
        #expect(code.modules[code.size - 8][8], "the dark module")
        #expect(throws: QRCode.TooLong.self) { try QRCode(String(repeating: "x", count: 300)) }
    }
}
