import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite(
    """
    Mail through a transactional outbox: links reach only their owner, over real SMTP (STARTTLS and AUTH), at \
    least once under one Message-ID
    """
)
struct OutboxTests {
    /// The delivery service of the test server, through `transport`.
    private func delivery(_ env: TestEnvironment, _ transport: any MailTransport) -> OutboxDelivery {
        var settings = MailSettings()
        settings.publicURL = "http://console.test"
        return OutboxDelivery(
            database: env.database, policies: env.policies, settings: settings, transport: transport,
            links: InvitationLinks(secondFactorKey: TestEnvironment.secondFactorKey),
            unsubscribeLinks: UnsubscribeLinks(
                secondFactorKey: TestEnvironment.secondFactorKey, fallback: settings.linkKey))
    }

    @Test(
        """
        the SMTP client sends over STARTTLS with AUTH: the server gets the message with its Message-ID, an \
        encoded subject and both parts; a wrong password is refused for good
        """
    )
    func smtpClient() async throws {
        let sink = try MailSink()
        defer { sink.stop() }
        let message = MailMessage(
            messageID: "m-1@backoffice.healthtrack", from: "backoffice@healthtrack.example",
            to: "ana@green-grocer.example",
            subject: "Bienvenue, Zoë", text: "Line one\n.a line that starts with a dot\nÉ", html: "<p>Hello</p>",
            date: Date(timeIntervalSince1970: 0))
        try await SMTPClient(settings: try sink.settings).send(message)
        let received = try #require(try sink.messages().first)
        #expect(received.header("Message-ID") == "<m-1@backoffice.healthtrack>")
        #expect(received.header("Subject") == "=?utf-8?B?\(Data("Bienvenue, Zoë".utf8).base64EncodedString())?=")
        #expect(received.header("X-Envelope-To") == "ana@green-grocer.example")
        #expect(
            received.mailBodies == ["Line one\r\n.a line that starts with a dot\r\nÉ", "<p>Hello</p>"],
            "dot-stuffing undone by the server")
        var wrong = try sink.settings
        wrong.password = "not the password"
        await #expect {
            try await SMTPClient(settings: wrong).send(message)
        } throws: { error in
            (error as? SMTPClient.Failure).map {
                $0.step == "AUTH PLAIN" && $0.permanent && !$0.description.contains("not the password")
            } ?? false
        }
        #expect(throws: MailMessage.Malformed.self) {
            try MailMessage(
                messageID: "m-2", from: "a@b.example", to: "x@y.example\r\nBcc: everyone@y.example", subject: "s",
                text: "", html: "", date: Date()
            ).rendered()
        }
    }

    @Test(
        """
        an invitation is emailed, never answered: the API says where it went (masked); the outbox row, the audit \
        log and the idempotency record hold no link; the mail's link sets the password once
        """
    )
    func invitationByEmail() async throws {
        let sink = try MailSink()
        defer { sink.stop() }
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let partner = env.fixture.partners[0]
                let created = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"mail.hire@green-grocer.example","role":"partner_staff"}"#)
                let person = try created.decode(Components.Schemas.Operator.self)
                let invited = try await client.call(
                    .post, "/v1/operators/\(person.id)/invitation", token: partner.adminToken,
                    headers: ["Idempotency-Key": UUID().uuidString])
                #expect(invited.status == 201, "\(invited.text)")
                let body = try invited.decode(Components.Schemas.InvitationCreated.self)
                #expect(
                    body.linkPath == nil && body.sentTo == "m…@green-grocer.example",
                    "the caller learns where it went, not the link")
                let shown = try await client.call(
                    .post, "/v1/operators/\(person.id)/invitation", token: partner.adminToken,
                    json: #"{"show_link":true}"#)
                #expect(shown.status == 403, "only a platform admin may have a link shown")

                let invitation = try #require(
                    try await env.ownerScalar(
                        """
                        SELECT id FROM operator_invitations WHERE operator_id = '\(person.id)' AND superseded_at \
                        IS NULL
                        """,
                        as: UUID.self))
                let secret = InvitationLinks(secondFactorKey: TestEnvironment.secondFactorKey).secret(for: invitation)
                    .value
                for table in ["outbox", "operator_invitations", "audit_events", "idempotency_keys"] {
                    let holding = try await env.ownerScalar(
                        "SELECT count(*) FROM \(table) t WHERE t::text LIKE '%\(secret)%'", as: Int64.self)
                    #expect(holding == 0, "\(table) does not hold the link's secret")
                }
                #expect(try await env.auditCount("mail.queued") == 1)

                #expect(try await delivery(env, SMTPMailTransport(try sink.settings)).deliverDue() == 1)
                let mail = try #require(try sink.messages().first)
                #expect(mail.header("X-Envelope-To") == "mail.hire@green-grocer.example")
                #expect(mail.header("Subject") == "Set your HealthTrack Back Office password")
                let text = try #require(mail.mailBodies.first)
                #expect(
                    text.contains("partner staff of") && text.contains("until"), "says who, and until when: \(text)")
                let link = try #require(
                    text.split(whereSeparator: \.isWhitespace).first {
                        $0.hasPrefix("http://console.test/console/invitation?key=")
                    })
                #expect(link.hasSuffix(secret), "the link carries the derived secret")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL", as: Int64.self)
                        == 1)

                let path = String(link.dropFirst("http://console.test".count))
                let accepted = try await ConsoleClient(client).post(
                    "/console/invitation",
                    [
                        "key": secret, "password": "a long enough passphrase",
                        "confirm_password": "a long enough passphrase",
                    ],
                    csrf: nil)
                #expect(accepted.status == 303, "the mailed link (\(path)) sets the password")
                var browser = ConsoleClient(client)
                #expect(
                    try await browser.signIn("mail.hire@green-grocer.example", "a long enough passphrase").status == 303
                )
                #expect(try await delivery(env, SMTPMailTransport(try sink.settings)).deliverDue() == 0, "sent once")
            }
        }
    }

    @Test(
        """
        a platform admin may have a link shown (audited as shown, nothing mailed); a partner admin's link for a \
        fellow admin goes to that admin's mailbox, not to the caller
        """
    )
    func shownLinksAndPeers() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let partner = env.fixture.partners[0]
                let created = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"co.admin@green-grocer.example","role":"partner_admin"}"#)
                let peer = try created.decode(Components.Schemas.Operator.self)
                _ = try await env.consolePassword(for: try #require(UUID(uuidString: peer.id)))
                let peerLink = try await client.call(
                    .post, "/v1/operators/\(peer.id)/invitation", token: partner.adminToken)
                #expect(peerLink.status == 201)
                #expect(
                    try peerLink.decode(Components.Schemas.InvitationCreated.self).linkPath == nil,
                    "the caller never holds the peer's link")
                #expect(
                    try await env.ownerScalar("SELECT recipient FROM outbox WHERE kind = 'invitation'", as: String.self)
                        == "co.admin@green-grocer.example")
                let platform = try #require(env.fixture.tokens[.platformAdmin])
                let shown = try await client.call(
                    .post, "/v1/operators/\(peer.id)/invitation", token: platform, json: #"{"show_link":true}"#)
                #expect(shown.status == 201)
                #expect(
                    try shown.decode(Components.Schemas.InvitationCreated.self).linkPath?.hasPrefix(
                        "/console/invitation?key=") == true)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM outbox", as: Int64.self) == 1,
                    "a shown link is not mailed")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'operators.invite' AND reason = 'shown'",
                        as: Int64.self)
                        == 1)
                // The console: the partner admin's button emails; the page says to whom.
                let console = try await ConsoleClient.signedIn(env, client, as: partner.admin.operatorID)
                let page = try await console.get("/console/people")
                let emailed = try await console.post("/console/people/\(peer.id)/invite", [:], csrf: page.csrf)
                #expect(emailed.status == 303 && !emailed.text.contains("invitation?key="))
                let showing = try await console.post(
                    "/console/people/\(peer.id)/invite", ["show_link": "yes"], csrf: page.csrf)
                #expect(showing.status == 403, "a partner admin cannot have it shown")
            }
        }
    }

    @Test(
        """
        delivery retries: a refused or unreachable server leaves the message queued with its error; it goes out \
        once the server answers, under the same Message-ID; a claim that lapses (a crash mid-send) is taken again
        """
    )
    func retriesAndLapsedClaims() async throws {
        let sink = try MailSink()
        let refusing = try MailSink(refuseAfter: 0, certificateFrom: sink)
        defer { sink.stop(); refusing.stop() }
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let platform = try #require(env.fixture.tokens[.platformAdmin])
                let person = try await client.call(
                    .post, "/v1/operators", token: platform,
                    json:
                        #"""
                        {"email":"retry.me@green-grocer.example","role":"partner_staff",\#
                        "tenant_id":"\#(env.fixture.partners[0].tenantID)"}
                        """#
                ).decode(Components.Schemas.Operator.self)
                #expect(
                    try await client.call(.post, "/v1/operators/\(person.id)/invitation", token: platform).status == 201
                )
            }
            let messageID = try #require(try await env.ownerScalar("SELECT message_id FROM outbox", as: String.self))
            #expect(try await delivery(env, SMTPMailTransport(try refusing.settings)).deliverDue() == 1)
            let error = try await env.ownerScalar(
                "SELECT last_error FROM outbox WHERE sent_at IS NULL AND gave_up_at IS NULL", as: String.self)
            #expect(error?.contains("451") == true, "a 4xx is kept for another attempt: \(error ?? "none")")
            #expect(
                try await delivery(env, SMTPMailTransport(try sink.settings)).deliverDue() == 0,
                "not due again before its backoff")
            env.clock.advance(by: 2)
            var closed = try sink.settings
            closed.port = 1
            #expect(
                try await delivery(env, SMTPMailTransport(closed)).deliverDue() == 1,
                "an unreachable server: another failed attempt")
            env.clock.advance(by: 3)
            #expect(try await delivery(env, SMTPMailTransport(try sink.settings)).deliverDue() == 1)
            let sent = try sink.messages()
            #expect(sent.count == 1 && sent.first?.header("Message-ID") == "<\(messageID)>")
            #expect(try await env.ownerScalar("SELECT attempts FROM outbox", as: Int32.self) == 3)

            // A process that claimed a message and died before marking it: the claim lapses, the message goes again.
            try await env.asOwner(
                """
                UPDATE outbox SET sent_at = NULL, claimed_until = \
                '\(ISO8601DateFormatter().string(from: env.clock.now().addingTimeInterval(60)))'
                """
            )
            #expect(
                try await delivery(env, SMTPMailTransport(try sink.settings)).deliverDue() == 0,
                "claimed by someone else")
            env.clock.advance(by: 61)
            #expect(try await delivery(env, SMTPMailTransport(try sink.settings)).deliverDue() == 1, "the claim lapsed")
            let again = try sink.messages()
            #expect(
                again.count == 2 && Set(again.compactMap { $0.header("Message-ID") }).count == 1,
                "sent again under the same Message-ID")
        }
    }

    static let mailboxes = [
        "maya@healthtrack.example", "first.last+tag@sub.green-grocer.example", "o'brien@x.example",
        "a!#$%&'*+-/=?^_`{|}~z@x9.example",
    ]
    static let notMailboxes = [
        "a<b@x.example", "a>b@x.example", "a,b@x.example", "a\tb@x.example", "a b@x.example", "<a@x.example>",
        "a@x.example>", "a@x.example\r\nBcc: b@x.example", "a@b@x.example", ".a@x.example", "a.@x.example",
        "a..b@x.example", "a@x", "a@-x.example", "a@x-.example", "a@x..example", "\"a b\"@x.example", "a@[127.0.0.1]",
        "maya@healthtrack.example.", "mäya@x.example", "a@xn--bcher-kva.ex_ample", "@x.example", "a@",
        String(repeating: "a", count: 65) + "@x.example", "a@" + String(repeating: "b", count: 64) + ".example",
        "a@" + String(repeating: "b.", count: 130) + "example", "ａ@x.example",
    ]

    @Test("addresses: only RFC 5321 mailboxes (dot-string @ domain) are taken, by the API and by the mail itself")
    func mailboxes() async throws {
        for address in Self.mailboxes { #expect(Validation.isMailbox(address), "\(address)") }
        for address in Self.notMailboxes { #expect(!Validation.isMailbox(address), "\(address.debugDescription)") }
        // A server's own sender may be a single-label host (the default `backoffice@HOST` of an SMTP URL).
        #expect(
            !Validation.isMailbox("backoffice@localhost")
                && Validation.isMailbox("backoffice@localhost", singleLabel: true))
        _ = try MailMessage(
            messageID: "m-4", from: "backoffice@localhost", to: "a@x.example", subject: "s", text: "", html: "",
            date: Date()
        ).rendered()
        for address in ["a,b@x.example", "a<b@x.example"] {
            #expect(throws: MailMessage.Malformed.self) {
                try MailMessage(
                    messageID: "m-3", from: "a@b.example", to: address, subject: "s", text: "", html: "", date: Date()
                ).rendered()
            }
        }
        try await TestEnvironment.with { env in
            let created = try await env.auditCount("operators.create")
            try await env.withApp { client in
                for address in ["a,b@x.example", "a<b@x.example", "a\tb@x.example", "a@x.example>"] {
                    let body = try JSONSerialization.data(withJSONObject: [
                        "email": address, "role": "auditor",
                    ])
                    let refused = try await client.call(
                        .post, "/v1/operators", token: env.fixture.tokens[.platformAdmin]!,
                        json: String(decoding: body, as: UTF8.self))
                    #expect(
                        refused.status == 422 && refused.text.contains("invalid_email"),
                        "\(address.debugDescription): \(refused.status) \(refused.text)")
                }
            }
            #expect(try await env.auditCount("operators.create") == created, "nothing changed")
        }
    }

    /// A transport whose every send takes `seconds` of the test's clock, recording what it sent;
    /// during its `during`-th send, `meanwhile` runs (another process's turn).
    final class SlowTransport: MailTransport, @unchecked Sendable {  // used by one task at a time
        let clock: ManualWallClock
        let seconds: Double
        var sent: [String] = []
        var during = 0
        var meanwhile: (() async throws -> Void)?

        init(clock: ManualWallClock, seconds: Double) { (self.clock, self.seconds) = (clock, seconds) }

        func deliver(_ message: MailMessage) async throws {
            clock.advance(by: seconds)
            sent.append(message.messageID)
            if sent.count == during, let meanwhile { try await meanwhile() }
        }
    }

    @Test("slow sends: a run of them outlasting a claim is never sent again by another process meanwhile")
    func slowSendsKeepTheirClaims() async throws {
        try await TestEnvironment.with { env in
            for index in 0..<6 {
                try await env.asOwner(
                    """
                    INSERT INTO outbox (id, tenant_id, kind, recipient, fields, message_id, created_at, due_at)
                    VALUES (gen_random_uuid(), '\(platformTenantID)', 'lockout_notice', 'person\(index)@example.com',
                        '{}', '<slow-\(index)@healthtrack.example>', now(), now() - interval '1 minute')
                    """)
            }
            // Each send takes 25 s: the third ends 75 s after the first claim, past a 60 s claim of a batch.
            let slow = SlowTransport(clock: env.clock, seconds: 25)
            let other = SlowTransport(clock: env.clock, seconds: 0)
            slow.during = 3
            slow.meanwhile = { _ = try await delivery(env, other).deliverDue() }
            #expect(try await delivery(env, slow).deliverDue() + other.sent.count == 6)
            #expect(
                Set(slow.sent).isDisjoint(with: other.sent), "sent twice: \(Set(slow.sent).intersection(other.sent))")
            #expect(slow.sent.count + other.sent.count == 6 && other.sent.count == 3, "the other took what no one held")
            #expect(try await env.ownerScalar("SELECT count(*) FROM outbox WHERE sent_at IS NULL", as: Int64.self) == 0)
        }
    }

    @Test("the lockout of an operator's email mails it a notice (once); templates escape what they show")
    func lockoutNoticeAndEscaping() async throws {
        try await TestEnvironment.with { env in
            let (email, _) = try await env.consolePassword(for: try #require(env.fixture.partners[0].admin.operatorID))
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                for _ in 0..<(env.policies.console.maxFailuresPerAccount + 3) {
                    _ = try await browser.signIn(email, "not the password at all")
                }
            }
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM outbox WHERE kind = 'lockout_notice'", as: Int64.self)
                    == 1)
            #expect(
                try await env.ownerScalar("SELECT recipient FROM outbox WHERE kind = 'lockout_notice'", as: String.self)
                    == email)
        }
        let rendered = try MailTemplates.render(
            .invitation,
            fields: [
                "role": "partner_admin", "tenant": "<script>alert(1)</script> & Co",
                "expires_at": "2026-11-27T00:00:00Z",
            ],
            link: "https://bo.example/console/invitation?key=abc\"><x")
        #expect(
            rendered.html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co")
                && !rendered.html.contains("<script>"))
        #expect(rendered.html.contains("key=abc&quot;&gt;&lt;x"))
        #expect(rendered.text.contains("HealthTrack Back Office") && rendered.text.contains("2026-11-27T00:00:00Z"))
        // A kind no template writes (each part declares its own kinds) is refused, never sent blank.
        #expect(throws: MailTemplates.Unwritten.self) {
            try MailTemplates.render("no_such_kind", fields: [:], link: nil)
        }
    }
}
