import BackofficeAPI
import Foundation
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The customer's rights: the data export and the erasure at purge")
struct CustomerRightsTests {
    /// Gives `customer` a record of every kind the back office holds, through the operations where they
    /// exist and as rows where another domain's flow would take a long setup (daily earnings, a badge, a score).
    static func everything(
        _ env: TestEnvironment, _ client: any TestClientProtocol, _ shop: ShopFixture, tag: String
    ) async throws {
        let customer = shop.customer
        let app = env.fixture.tokens[.appService]!
        #expect(
            try await HealthProfilesAPITests.sync(client, env, customer, HealthProfilesAPITests.profile).status == 200)
        let lighter = HealthProfilesAPITests.profile.replacingOccurrences(of: "72.5", with: "71.0")
        #expect(try await HealthProfilesAPITests.sync(client, env, customer, lighter).status == 200)
        let path = HealthProfilesAPITests.path(customer)
        _ = try await client.call(.get, "\(path)?purpose=support_request", token: env.fixture.tokens[.backendManager]!)
        let order = try await client.call(
            .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("MAT", 1, "usd")]), headers: .newIdempotencyKey
        )
        #expect(order.status == 201, "\(order.text)")
        let event = #"""
            {"events":[{"event_id":"walk-\#(tag)","customer_id":"\#(customer.id.text)","metric":"steps","value":4000,\#
            "occurred_at":"\#(RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(-3_600)))"}]}
            """#
        #expect(try await client.call(.post, "/v1/activity", token: app, json: event).status == 200)
        _ = try await env.database.run(
            ReportLoginAttempt(customerID: customer.id, succeeded: true), context: env.context(.appService))
        _ = try await env.database.run(
            TransitionAccount(customerID: customer.id, move: .lock, reason: "review \(tag)"),
            context: env.context(.backendManager))
        _ = try await env.database.run(
            FileAppeal(customerID: customer.id, message: "It was me, \(tag)"), context: env.context(.appService))
        _ = try await env.database.run(
            SendAccountNotice(
                customerID: customer.id, text: try NoticeText(subject: "Review \(tag)", body: "Hello \(tag)"),
                reason: "review"),
            context: env.context(.backendManager))
        let challenge = try await env.database.run(
            CreateChallenge(
                .init(
                    name: "Export \(tag)", metric: "steps", aggregation: "sum", startsAt: env.clock.now(),
                    endsAt: env.clock.now().addingTimeInterval(86_400), rankBands: [(1, 1, 10, nil)],
                    budgetPoints: 10)), context: env.context(.backendManager))
        for row in [
            "INSERT INTO badges (slug, name) VALUES ('export-\(tag)', 'Export')",
            "INSERT INTO badge_awards VALUES ('\(customer.id.text)', 'export-\(tag)', 'test', now())",
            "INSERT INTO challenge_scores VALUES ('\(challenge.id.text)', '\(customer.id.text)', 4000, 1, now())",
            """
            INSERT INTO fitpoints_daily_earnings VALUES ('\(customer.id.text)', 'metric:steps', current_date, 4000, 40)
            ON CONFLICT DO NOTHING
            """,
        ] {
            try await env.asOwner(row)
        }
    }

    @Test(
        """
        the export holds each kind of record for a customer who has all of them and nothing of another \
        customer; it is audited once, its health read is an access event via export; partners and managers \
        cannot ask for it
        """
    )
    func export() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let other = try await ShopFixture.make(env, partner: 1)
            try await env.withApp { client in
                try await Self.everything(env, client, shop, tag: "mine")
                try await Self.everything(env, client, other, tag: "theirs")
                let app = env.fixture.tokens[.appService]!
                let path = "/v1/customers/\(shop.customer.id.text)/data-export"
                let reply = try await client.call(.post, path, token: app)
                #expect(reply.status == 200 && reply.headers[.cacheControl] == "no-store", "\(reply.text.prefix(300))")
                let document = reply.json
                #expect(document["customer_id"] as? String == shop.customer.id.text)
                for section in [
                    "locks", "notices", "appeals", "login_attempts", "activity", "daily_earnings", "badges",
                    "challenge_scores",
                    "orders", "health_profile_accesses",
                ] {
                    #expect((document[section] as? [Any])?.isEmpty == false, "\(section) holds the customer's records")
                }
                #expect((document["account"] as? [String: Any])?["email"] as? String == shop.customer.email)
                let ledger = (document["fitpoints"] as? [String: Any])?["ledger"] as? [Any]
                #expect(ledger?.isEmpty == false, "the FitPoints ledger")
                let health = document["health_profile"] as? [String: Any]
                #expect(health?["weight_kg"] as? Double == 71.0 && (health?["history"] as? [Any])?.count == 2)
                let orders = document["orders"] as? [[String: Any]] ?? []
                #expect(orders.first?["shipping_name"] as? String == "Ada Lovelace")
                #expect(orders.first?["payments"] == nil && orders.first?["tenant_id"] == nil, "not the shop's own")
                for foreign in [other.customer.id.text, other.customer.email, "theirs"] {
                    #expect(!reply.text.contains(foreign), "nothing of another customer: \(foreign)")
                }
                #expect(!reply.text.contains("locked_by") && !reply.text.contains("resolved_by"), "no staff identity")
                #expect(try await env.auditCount("privacy.export_customer_data") == 1)
                let via = try await env.ownerScalar(
                    "SELECT count(*) FROM health_access_events WHERE via = 'export' AND purpose = 'data_request'",
                    as: Int64.self)
                #expect(via == 1, "the export's health read is recorded")
                for token in [env.fixture.partners[0].adminToken, env.fixture.tokens[.backendManager]!] {
                    #expect(try await client.call(.post, path, token: token).status == 403)
                }
                let unknown = try await client.call(.post, "/v1/customers/\(UUID().uuidString)/data-export", token: app)
                #expect(unknown.status == 404)
            }
        }
    }

    @Test(
        """
        after the retention period the purge erases the health profile and its history, the orders' shipping \
        name and address (amounts and dates kept), and the audit log and the access log still verify; the purge \
        is audited naming what it erased
        """
    )
    func erasure() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let id = shop.customer.id.text
            try await env.withApp { client in
                try await Self.everything(env, client, shop, tag: "gone")
                let manager = env.fixture.tokens[.backendManager]!
                let auditor = env.fixture.tokens[.auditor]!
                _ = try await env.database.run(
                    TransitionAccount(customerID: shop.customer.id, move: .delete, reason: "asked to leave"),
                    context: env.context(.backendManager))
                let early = try await client.call(
                    .post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":false}"#,
                    headers: .newIdempotencyKey)
                #expect(early.status == 200)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM health_profiles WHERE customer_id = '\(id)'", as: Int64.self) == 1,
                    "kept during the retention period")
                env.clock.advance(by: 31 * 86_400)
                let purge = try await client.call(
                    .post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":false}"#,
                    headers: .newIdempotencyKey)
                #expect(purge.status == 200, "\(purge.text)")
                for table in ["health_profiles", "health_profile_history", "customers"] {
                    let column = table == "customers" ? "id" : "customer_id"
                    #expect(
                        try await env.ownerScalar(
                            "SELECT count(*) FROM \(table) WHERE \(column) = '\(id)'", as: Int64.self) == 0,
                        "\(table) erased")
                }
                let order = try await env.ownerScalar(
                    """
                    SELECT shipping_name || ' ' || shipping_address::text || ' ' || total_cents FROM orders
                    WHERE customer_id = '\(id)'
                    """, as: String.self)
                #expect(order == "erased {} 4900", "the amount kept, the name and address erased: \(order ?? "none")")
                let event =
                    try await env.ownerScalar(
                        "SELECT after::text FROM audit_events WHERE action = 'accounts.purge' AND target_id = '\(id)'",
                        as: String.self) ?? ""
                #expect(event.contains("health_profile") && event.contains("orders.shipping_name"), "\(event)")
                let audit = try await client.call(.post, "/v1/audit/verify", token: auditor, json: "{}")
                #expect(audit["intact"] == "1", "\(audit.text)")
                let accessLog = try await client.call(.post, "/v1/health-access-log/verify", token: auditor, json: "{}")
                #expect(accessLog["intact"] == "1", "\(accessLog.text)")
                let read = try await client.call(
                    .get, "\(HealthProfilesAPITests.path(shop.customer))?purpose=audit", token: auditor)
                #expect(read.status == 404, "the profile is gone with its customer")

                // Every read of the kept order says it is erased, in one documented shape.
                let orderID = try #require(
                    try await env.ownerScalar(
                        "SELECT id::text FROM orders WHERE customer_id = '\(id)' LIMIT 1", as: String.self))
                for token in [shop.partner.adminToken, auditor] {
                    let one = try await client.call(.get, "/v1/orders/\(orderID)", token: token)
                    #expect(one.status == 200, "\(one.text)")
                    let shipping = try one.decode(Components.Schemas.Order.self).shipping
                    #expect(
                        shipping.erased == true && shipping.name == "erased" && shipping.address.line1.isEmpty
                            && shipping.address.country.isEmpty, "\(one.text)")
                    let list = try await client.call(.get, "/v1/orders?limit=500", token: token)
                    #expect(list.status == 200, "\(list.text.prefix(300))")
                    let listed = try list.decode(Components.Schemas.OrderPage.self).items.first { $0.id == orderID }
                    #expect(listed?.shipping == shipping, "the list and the order read alike")
                }
                let sales = try await client.call(.get, "/v1/reports/sales", token: shop.partner.adminToken)
                #expect(sales.status == 200, "\(sales.text.prefix(300))")
                let console = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let page = try await console.get("/console/orders/\(orderID)")
                #expect(page.status == 200 && page.text.contains("id=\"shipping-erased\""), "\(page.text.prefix(300))")
                let board = try await console.get("/console/orders")
                #expect(board.status == 200 && board.text.contains("(erased)"))
            }
        }
    }
}
