import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite(
    """
    Notification mails an operator chooses: offered by role, queued with the change that causes them, each with a \
    signed one-topic unsubscribe link that works without signing in
    """
)
struct MailPreferenceTests {
    /// The recipients' roles of the `kind` mails about `reference`, sorted.
    static func recipients(_ env: TestEnvironment, _ kind: String, about reference: UUID) async throws -> String {
        try await env.ownerScalar(
            """
            SELECT coalesce(string_agg(o.role, ',' ORDER BY o.role), '') FROM outbox x
            JOIN operators o ON o.id = x.operator_id
            WHERE x.kind = '\(kind)' AND x.reference = '\(reference.text)'
            """, as: String.self) ?? ""
    }

    static func operatorID(_ env: TestEnvironment, _ email: String) async throws -> UUID {
        try #require(try await env.ownerScalar("SELECT id FROM operators WHERE email = '\(email)'", as: UUID.self))
    }

    static func topics(_ reply: Reply) throws -> String {
        try reply.decode(Components.Schemas.MailPreferenceList.self).items.map {
            "\($0.topic)=\($0.subscribed ? "on" : "off")"
        }.joined(separator: " ")
    }

    @Test(
        """
        each role is offered its topics, on until turned off; a change is audited once and a repeat records \
        nothing; a topic not offered, a Unicode look-alike or a topic named twice is refused and changes nothing
        """)
    func offeredAndChosen() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let partner = env.fixture.partners[0]
                let path = "/v1/me/mail-preferences"
                let staff = try await client.call(.get, path, token: partner.staffToken)
                #expect(try Self.topics(staff) == "daily_summary=on low_stock=on new_order=on")
                let admin = try await client.call(.get, path, token: partner.adminToken)
                #expect(
                    try Self.topics(admin)
                        == "daily_summary=on low_stock=on new_order=on webhook_endpoint_disabled=on")
                let manager = try await client.call(.get, path, token: env.fixture.tokens[.backendManager])
                #expect(try Self.topics(manager) == "appeals_waiting=on urgent_case=on")
                let auditor = try await client.call(.get, path, token: env.fixture.tokens[.auditor])
                #expect(try Self.topics(auditor) == "")
                let app = try await client.call(.get, path, token: env.fixture.tokens[.appService])
                #expect(app.status == 403)

                let off = try await client.call(
                    .patch, path, token: partner.staffToken, json: #"{"unsubscribe":["new_order"]}"#)
                #expect(off.status == 200)
                #expect(try Self.topics(off) == "daily_summary=on low_stock=on new_order=off")
                _ = try await client.call(
                    .patch, path, token: partner.staffToken, json: #"{"unsubscribe":["new_order"]}"#)
                #expect(try await env.auditCount("mail_preferences.update") == 1, "the repeat changed nothing")
                #expect(
                    try Self.topics(try await client.call(.get, path, token: partner.adminToken))
                        == "daily_summary=on low_stock=on new_order=on webhook_endpoint_disabled=on",
                    "the admin's own are untouched")

                for body in [
                    #"{"subscribe":["webhook_endpoint_disabled"]}"#,  // offered to admins only
                    #"{"unsubscribe":["low_stock","new_ord\#u{0435}r"]}"#,  // a Cyrillic "е"
                    #"{"subscribe":["low_stock"],"unsubscribe":["low_stock"]}"#,
                    #"{"unsubscribe":["NEW_ORDER"]}"#,
                ] {
                    let refused = try await client.call(.patch, path, token: partner.staffToken, json: body)
                    #expect(refused.status == 422 && refused.text.contains("topics"), "\(body)")
                }
                #expect(
                    try Self.topics(try await client.call(.get, path, token: partner.staffToken))
                        == "daily_summary=on low_stock=on new_order=off")
                #expect(try await env.auditCount("mail_preferences.update") == 1)
            }
        }
    }

    @Test(
        """
        an order paid mails the shop's people who want it (not one who turned it off, nobody of another shop); \
        low stock mails them too; an urgent case (opened so or raised to it) mails the moderation roles
        """)
    func queuedWithTheChange() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let staff = try await Self.operatorID(env, "staff@alpha-shop.example")
            let staffPrincipal = Principal(
                operatorID: staff, role: .partnerStaff, tenantID: shop.partner.tenantID, tokenID: nil)
            _ = try await env.database.run(
                SetMailPreferences(choices: [(topic: "new_order", subscribed: false)]),
                context: OperationContext(
                    principal: staffPrincipal, requestID: "t", sourceIP: nil, policies: env.policies))
            let first = try await WebhookDeliveryTests.placeOrder(shop, 2)
            #expect(try await Self.recipients(env, "new_order", about: first) == "partner_admin")
            #expect(try await Self.recipients(env, "low_stock", about: shop.goods["BOTTLE"]!) == "", "stock 8")
            _ = try await WebhookDeliveryTests.placeOrder(shop, 3)
            #expect(
                try await Self.recipients(env, "low_stock", about: shop.goods["BOTTLE"]!)
                    == "partner_admin,partner_staff", "stock 5: at the line")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM outbox WHERE tenant_id = '\(env.fixture.partners[1].tenantID.text)'",
                    as: Int64.self) == 0, "another shop's people get nothing")

            let author = try await env.customer()
            let urgent = UUID()
            try await env.asOwner(
                """
                INSERT INTO moderation_cases (id, content_kind, content_id, content_text, author_id, opened_by,
                    severity, opened_at)
                VALUES ('\(urgent.text)', 'post', 'p-urgent', 'words', '\(author.id.text)', 'report', 3, now())
                """)
            #expect(
                try await Self.recipients(env, "urgent_case", about: urgent)
                    == "backend_manager,moderator,platform_admin")
            let calm = UUID()
            try await env.asOwner(
                """
                INSERT INTO moderation_cases (id, content_kind, content_id, content_text, author_id, opened_by,
                    severity, opened_at)
                VALUES ('\(calm.text)', 'post', 'p-calm', 'words', '\(author.id.text)', 'report', 2, now())
                """)
            #expect(try await Self.recipients(env, "urgent_case", about: calm) == "")
            try await env.asOwner("UPDATE moderation_cases SET severity = 3 WHERE id = '\(calm.text)'")
            #expect(
                try await Self.recipients(env, "urgent_case", about: calm)
                    == "backend_manager,moderator,platform_admin", "raised to urgent")
        }
    }

    @Test(
        """
        the mail carries its one-topic link (and List-Unsubscribe for one click); the link unsubscribes its \
        operator without signing in, 30 clicks at once recorded once as theirs; a key for another topic or \
        operator, or a tampered one, changes nothing
        """)
    func unsubscribeLink() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let admin = try #require(shop.partner.admin.operatorID)
            let order = try await WebhookDeliveryTests.placeOrder(shop, 1)
            var settings = MailSettings()
            settings.publicURL = "http://console.test"
            let links = UnsubscribeLinks(secondFactorKey: TestEnvironment.secondFactorKey, fallback: settings.linkKey)
            let delivery = OutboxDelivery(
                database: env.database, policies: env.policies, settings: settings,
                transport: LogMailTransport(logger: testLogger),
                links: InvitationLinks(secondFactorKey: TestEnvironment.secondFactorKey), unsubscribeLinks: links)
            let claimed = OutboxDelivery.Claimed(
                id: UUID(), kind: .newOrder, recipient: "admin@alpha-shop.example", operatorID: admin,
                reference: order, fields: ["total_cents": "2500", "total_fitpoints": "0", "line_count": "1"],
                messageID: "m@x", attempts: 1, createdAt: Date())
            let message = try delivery.message(claimed)
            let path = links.path(operatorID: admin, topic: "new_order")
            #expect(message.unsubscribe == "http://console.test" + path)
            let rendered = try message.rendered()
            #expect(rendered.contains("List-Unsubscribe: <http://console.test\(path)>\r\n"))
            #expect(rendered.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"))
            #expect(message.text.contains("http://console.test/console/orders/\(order.text)"))
            #expect(message.subject == "A new order to handle: $25.00")

            try await env.withApp { client in
                let browser = ConsoleClient(client)
                let page = try await browser.get(path)
                #expect(
                    page.status == 200 && page.text.contains("Stop these mails")
                        && page.text.contains("@alpha-shop.example"))
                let key = String(path.split(separator: "=").last!)
                // A key with its first character changed (the last one's low bits are padding).
                let tampered = (key.first == "A" ? "B" : "A") + key.dropFirst()
                let staff = try await Self.operatorID(env, "staff@alpha-shop.example")
                for wrong in [
                    "/console/unsubscribe?operator=\(admin.text)&topic=low_stock&key=\(key)",
                    "/console/unsubscribe?operator=\(staff.text)&topic=new_order&key=\(key)",
                    "/console/unsubscribe?operator=\(admin.text)&topic=new_order&key=\(tampered)",
                    "/console/unsubscribe?operator=\(admin.text)&topic=new_order",
                ] {
                    #expect(try await browser.get(wrong).status == 404, "\(wrong)")
                    #expect(try await browser.post(wrong, ["List-Unsubscribe": "One-Click"], csrf: nil).status == 404)
                }
                #expect(try await env.auditCount("mail_preferences.update") == 0)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await browser.post(path, ["List-Unsubscribe": "One-Click"], csrf: nil).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
                #expect(try await env.auditCount("mail_preferences.update") == 1)
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT actor_id::text || ' ' || reason FROM audit_events
                        WHERE action = 'mail_preferences.update'
                        """, as: String.self) == "\(admin.text) unsubscribe link")
                let later = try await WebhookDeliveryTests.placeOrder(shop, 1)
                #expect(
                    try await Self.recipients(env, "new_order", about: later) == "partner_staff", "the admin no more")
                let own = try await client.call(.get, "/v1/me/mail-preferences", token: shop.partner.adminToken)
                #expect(
                    try Self.topics(own) == "daily_summary=on low_stock=on new_order=off webhook_endpoint_disabled=on")
            }
        }
    }

    @Test(
        """
        the Security page offers the role's topics as checkboxes and saves them (unticked: off, audited as the \
        operator's); a role offered none sees no form
        """)
    func securityPage() async throws {
        try await TestEnvironment.with { env in
            let staff = try await Self.operatorID(env, "staff@alpha-shop.example")
            let (email, password) = try await env.consolePassword(for: staff)
            let expert = try await env.consolePassword(for: try #require(env.fixture.principals[.expert]?.operatorID))
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                _ = try await browser.signIn(email, password)
                let page = try await browser.get("/console/security")
                #expect(page.text.contains(#"id="mail-new_order" name="mail_new_order" value="on" checked"#))
                #expect(page.text.contains(#"id="mail-low_stock" name="mail_low_stock" value="on" checked"#))
                #expect(!page.text.contains("mail-webhook_endpoint_disabled"), "offered to admins only")
                let saved = try await browser.post(
                    "/console/security/mail", ["mail_low_stock": "on", "mail_urgent_case": "on"], csrf: page.csrf)
                #expect(saved.status == 303 && saved.location == "/console/security")
                let after = try await browser.get("/console/security")
                #expect(after.text.contains(#"name="mail_new_order" value="on">"#), "unticked: off")
                #expect(after.text.contains(#"name="mail_low_stock" value="on" checked"#))
                #expect(!after.text.contains("mail_urgent_case"), "a topic not offered is ignored, never added")
                #expect(
                    try await env.ownerScalar(
                        "SELECT actor_id FROM audit_events WHERE action = 'mail_preferences.update'", as: UUID.self)
                        == staff)
                var other = ConsoleClient(client)
                _ = try await other.signIn(expert.email, expert.password)
                let plain = try await other.get("/console/security")
                #expect(plain.status == 200 && !plain.text.contains("mail-choices"))
            }
        }
    }

    @Test(
        """
        the day's mails go once about the day before, 30 wakes at once included: a shop's summary to its people \
        (none to a shop with nothing to tell, nor to one who turned it off), the appeals waiting to the managers
        """)
    func dailyMails() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            _ = try await WebhookDeliveryTests.placeOrder(shop, 2)
            let customer = try await env.customer()
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "takeover"),
                context: env.context(.backendManager))
            _ = try await env.database.run(
                FileAppeal(customerID: customer.id, message: "it was me"), context: env.context(.appService))
            let day = UTCDay(env.clock.now())
            env.clock.advance(by: 86_400)
            let service = DailyMailService(database: env.database, policies: env.policies, interval: .seconds(600))
            let queued = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<30 { group.addTask { try await service.sendDue() } }
                return try await group.reduce(0, +)
            }
            #expect(queued == 4, "the shop's admin and staff; the platform admin and the manager")
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT string_agg(o.role || ' ' || (x.fields->>'day') || ' ' || (x.fields->>'orders') || ' ' ||
                        (x.fields->>'sales') || ' ' || (x.fields->>'to_accept'), ',' ORDER BY o.role)
                    FROM outbox x JOIN operators o ON o.id = x.operator_id WHERE x.kind = 'daily_summary'
                    """, as: String.self)
                    == "partner_admin \(day) 1 $50.00 1,partner_staff \(day) 1 $50.00 1", "beta-shop had nothing")
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT string_agg(o.role || ' ' || (x.fields->>'count'), ',' ORDER BY o.role)
                    FROM outbox x JOIN operators o ON o.id = x.operator_id WHERE x.kind = 'appeals_waiting'
                    """, as: String.self) == "backend_manager 1,platform_admin 1")
            #expect(try await env.auditCount("mail.daily_summary") == 1)
            #expect(try await env.auditCount("mail.appeals_waiting") == 1)

            let staff = try await Self.operatorID(env, "staff@alpha-shop.example")
            _ = try await env.database.run(
                SetMailPreferences(choices: [(topic: "daily_summary", subscribed: false)]),
                context: OperationContext(
                    principal: Principal(
                        operatorID: staff, role: .partnerStaff, tenantID: shop.partner.tenantID, tokenID: nil),
                    requestID: "t", sourceIP: nil, policies: env.policies))
            env.clock.advance(by: 86_400)
            #expect(try await service.sendDue() == 3, "the order still waits to be accepted: the admin alone")
            let rendered = try MailTemplates.render(
                .dailySummary,
                fields: [
                    "shop": "Alpha", "day": "2026-11-29", "orders": "3", "sales": "$75.00", "sales_fitpoints": "0",
                    "refunds": "1", "refunded": "$5.00", "to_accept": "2", "to_ship": "1", "low_stock": "4",
                ], link: "http://console.test/console/home", unsubscribe: "http://console.test/u")
            #expect(rendered.subject == "Alpha: your day, 2026-11-29")
            #expect(rendered.text.contains("3 order(s) placed, $75.00 in sales; 1 refund(s) ($5.00)."))
            #expect(rendered.text.contains("Stop these mails: http://console.test/u"))
            let broken = try MailTemplates.render(
                .lowStock, fields: ["name": "Cork\r\nBcc: x@y.example", "sku": "MAT-1", "stock": "4"], link: nil)
            #expect(broken.subject == "Low stock: Cork Bcc: x@y.example (MAT-1)", "a subject is one line")
        }
    }

    @Test(
        """
        with mail_recipients owned by a role that row-level security binds (as a production owner is, not the \
        tests' superuser), an order paid in the app's transaction and the day's mails run by the system still \
        honour every operator's choice, and the transaction's operator is the same afterwards
        """)
    func choicesHonouredUnderForcedRLS() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let staff = try await Self.operatorID(env, "staff@alpha-shop.example")
            _ = try await env.database.run(
                SetMailPreferences(choices: [("new_order", false), ("daily_summary", false)]),
                context: OperationContext(
                    principal: Principal(
                        operatorID: staff, role: .partnerStaff, tenantID: shop.partner.tenantID, tokenID: nil),
                    requestID: "t", sourceIP: nil, policies: env.policies))
            let owner = "mail_owner_\(UUID().uuidString.prefix(8).lowercased())"
            for statement in [
                "CREATE ROLE \(owner) NOSUPERUSER NOBYPASSRLS",
                "GRANT SELECT ON operators, mail_topics, mail_preferences TO \(owner)",
                "ALTER FUNCTION mail_recipients(uuid, text) OWNER TO \(owner)",
            ] {
                try await env.asOwner(statement)
            }
            let order = try await WebhookDeliveryTests.placeOrder(shop, 1)
            #expect(try await Self.recipients(env, "new_order", about: order) == "partner_admin", "not the staff")
            env.clock.advance(by: 86_400)
            _ = try await DailyMailService(database: env.database, policies: env.policies, interval: .seconds(600))
                .sendDue()
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT string_agg(o.role, ',') FROM outbox x JOIN operators o ON o.id = x.operator_id
                    WHERE x.kind = 'daily_summary'
                    """, as: String.self) == "partner_admin")
            let admin = try #require(shop.partner.admin.operatorID)
            #expect(
                await env.asService(
                    shop.partner.admin,
                    """
                    DO $$ BEGIN
                        PERFORM * FROM mail_recipients('\(shop.partner.tenantID.text)', 'new_order');
                        IF current_setting('app.operator_id') <> '\(admin.text)' THEN
                            RAISE EXCEPTION 'the operator was not put back';
                        END IF;
                    END $$
                    """) == nil)
        }
    }
}
