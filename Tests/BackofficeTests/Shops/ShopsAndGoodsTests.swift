import Backoffice
import Foundation
import HTTPTypes
import Testing

/// A shop application as the public form sends it.
enum ShopForm {
    static func json(
        legalName: String = "Northwind Sports LLC", email: String = "owner@northwind.example", taxID: String = "12-3456789",
        routing: String = "110000000", account: String = SimulatedPaymentGateway.verifiedAccount, city: String = "Portland"
    ) -> String {
        """
        {"legal_name": "\(legalName)", "contact_email": "\(email)", "tax_id": "\(taxID)",
         "address": {"line1": "1 Harbor Way", "city": "\(city)", "region": "OR", "postal_code": "97201", "country": "us"},
         "payout_bank_account": {"holder_name": "Northwind Sports LLC", "routing_number": "\(routing)", "account_number": "\(account)"}}
        """
    }
}

@Suite("Shops: the public application, its checks, approval into a working partner")
struct ShopApplicationTests {
    @Test(
        "application → checks → approval → the new partner admin works with the delivered token, creates goods, sees only its tenant; the other partner's goods are 404"
    )
    func applicationToWorkingPartner() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let other = env.fixture.partners[1]
            try await env.withApp { client in
                let applied = try await client.call(.post, "/v1/shop-applications", token: nil, json: ShopForm.json())
                #expect(applied.status == 201, "\(applied.text)")
                #expect(applied.json["eligible"] as? Bool == true)
                #expect(applied.json["status"] as? String == "pending")
                let checks = applied.json["checks"] as? [[String: Any]] ?? []
                #expect(checks.map { $0["check"] as? String } == ["required_fields", "tax_id_format", "duplicate_shop", "bank_account"])
                #expect(checks.allSatisfy { $0["passed"] as? Bool == true })
                #expect((applied.json["payout_account"] as? [String: Any])?["last4"] as? String == "6789")
                let id = try #require(applied.json["id"] as? String)
                // The account number is kept nowhere: not in the application, not in the audit log.
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM shop_applications WHERE row_to_json(shop_applications)::text LIKE '%\(SimulatedPaymentGateway.verifiedAccount)%'",
                        as: Int.self) == 0)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE row_to_json(audit_events)::text LIKE '%\(SimulatedPaymentGateway.verifiedAccount)%'",
                        as: Int.self) == 0)
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'shop_applications.apply' AND actor_role = 'anonymous' AND target_id = '\(id)'",
                        as: Int.self) == 1)
                // Nor the applicant's contact email and tax id: the log outlives the application, and auditors read it.
                for personal in ["owner@northwind.example", "12-3456789", "123456789"] {
                    #expect(
                        try await env.ownerScalar(
                            "SELECT count(*) FROM audit_events WHERE row_to_json(audit_events)::text LIKE '%\(personal)%'", as: Int.self) == 0,
                        "\(personal) in the audit log")
                }

                let waiting = try await client.call(.get, "/v1/shop-applications?status=pending", token: manager)
                #expect((waiting.json["items"] as? [[String: Any]])?.contains { $0["id"] as? String == id } == true)

                let code = try #require(applied.json["claim_code"] as? String, "the applicant's answer holds its claim code")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM shop_applications WHERE claim_hash = sha256('\(code)'::bytea)", as: Int.self) == 1
                )
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE row_to_json(audit_events)::text LIKE '%\(code)%'", as: Int.self) == 0)
                let early = try await client.call(.post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(early.status == 409 && early["code"] == "not_approved", "\(early.text)")

                let approved = try await client.call(
                    .post, "/v1/shop-applications/\(id)/approve", token: manager, json: #"{"reason": "checks passed"}"#,
                    headers: ["Idempotency-Key": "approve-northwind"])
                #expect(approved.status == 200, "\(approved.text)")
                let tenant = try #require((approved.json["tenant"] as? [String: Any])?["id"] as? String)
                #expect((approved.json["tenant"] as? [String: Any])?["slug"] as? String == "northwind-sports-llc")
                #expect((approved.json["admin"] as? [String: Any])?["role"] as? String == "partner_admin")
                #expect((approved.json["admin"] as? [String: Any])?["email"] as? String == "owner@northwind.example")
                #expect(approved.json["token"] == nil && !approved.text.contains("bo_"), "the manager is handed no credential")
                #expect((approved.json["application"] as? [String: Any])?["status"] as? String == "approved")
                #expect(try await env.ownerScalar("SELECT count(*) FROM tokens WHERE tenant_id = '\(tenant)'", as: Int.self) == 0)
                let again = try await client.call(.post, "/v1/shop-applications/\(id)/approve", token: manager, json: "{}")
                #expect(again.status == 409)
                #expect(again["current_state"] == "approved")

                // The applicant claims its shop once: the first admin's token.
                let wrong = try await client.call(.post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"sc_guess"}"#)
                #expect(wrong.status == 403 && wrong["code"] == "claim_refused", "\(wrong.text)")
                let claimed = try await client.call(.post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(claimed.status == 201, "\(claimed.text)")
                #expect(claimed.headers[.cacheControl] == "no-store")
                let secret = try #require(claimed["secret"])
                let twice = try await client.call(.post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(twice.status == 403 && twice["code"] == "claim_refused", "single use")
                #expect(try await env.ownerScalar("SELECT count(*) FROM tokens WHERE tenant_id = '\(tenant)'", as: Int.self) == 1)

                // The new partner admin works with the claimed token.
                let me = try await client.call(.get, "/v1/me", token: secret)
                #expect(me.status == 200)
                #expect(me["tenant_id"] == tenant)
                let created = try await client.call(
                    .post, "/v1/goods", token: secret,
                    json: #"{"sku": "NW-BOTTLE", "name": "Steel bottle", "category": "hydration", "price_cents": 2500, "stock": 40}"#)
                #expect(created.status == 201, "\(created.text)")
                #expect(created["tenant_id"] == tenant)
                #expect(created["status"] == "draft")
                let mine = try await client.call(.get, "/v1/goods", token: secret)
                let skus = (mine.json["items"] as? [[String: Any]] ?? []).map { $0["sku"] as? String }
                #expect(skus == ["NW-BOTTLE"])

                // The other partner's goods: 404 to the new admin (existence not revealed), and not listed.
                let foreign = try await client.call(
                    .post, "/v1/goods", token: other.adminToken,
                    json: #"{"sku": "OTHER-1", "name": "Their mat", "category": "mats", "price_fitpoints": 900, "stock": 3}"#)
                #expect(foreign.status == 201)
                let foreignID = try #require(foreign["id"])
                for (method, path, body) in [
                    (HTTPRequest.Method.get, "/v1/goods/\(foreignID)", nil), (.patch, "/v1/goods/\(foreignID)", #"{"stock": 0}"#),
                    (.post, "/v1/goods/\(foreignID)/archive", nil),
                ] {
                    let reply = try await client.call(method, path, token: secret, json: body, headers: ["If-Match": "\"1\""])
                    #expect(reply.status == 404, "\(method) \(path): \(reply.status) \(reply.text)")
                }
                #expect(try await client.call(.get, "/v1/goods", token: secret).text.contains("OTHER-1") == false)
            }
        }
    }

    @Test("a claim code expires 14 days after the application: an approved shop claimed later is 403 claim_refused")
    func claimCodesExpire() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let applied = try await client.call(.post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Late Co"))
                let (id, code) = (try #require(applied["id"]), try #require(applied["claim_code"]))
                #expect(
                    try await client.call(.post, "/v1/shop-applications/\(id)/approve", token: env.fixture.tokens[.backendManager]!, json: "{}")
                        .status
                        == 200)
                env.clock.advance(by: 15 * 24 * 3600)
                let late = try await client.call(.post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(late.status == 403 && late["code"] == "claim_refused", "\(late.text)")
                #expect(try await env.ownerScalar("SELECT count(*) FROM tokens WHERE name = 'claimed by the applicant'", as: Int.self) == 0)
            }
        }
    }

    @Test("an applicant is never told which shop has its tax id; approval checks again and refuses a duplicate that appeared since")
    func duplicatesStayPrivateAndAreCheckedAtApproval() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let first = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "First Co", taxID: "12-3456789"))
                #expect(first.json["eligible"] as? Bool == true)
                let copycat = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Copy Co", taxID: "12-3456789"))
                #expect(copycat.json["eligible"] as? Bool == false)
                #expect(!copycat.text.contains("application waiting") && !copycat.text.contains("approved shop"), "\(copycat.text)")
                #expect(copycat.text.contains("not_eligible"))
                // A shop with First Co's tax id appears by another path before First Co is approved.
                let id = try #require(first["id"])
                let tenant = env.fixture.partners[1].tenantID.uuidString.lowercased()
                try await env.asOwner(
                    """
                    INSERT INTO shop_profiles (tenant_id, legal_name, contact_email, tax_id, address, payout_account_ref, payout_account_last4,
                        application_id)
                    VALUES ('\(tenant)', 'Elsewhere Co', 'x@elsewhere.example', '12-3456789', '{}'::jsonb, 'ba_x', '6789', '\(try #require(copycat["id"]))')
                    """)
                let approval = try await client.call(.post, "/v1/shop-applications/\(id)/approve", token: manager, json: "{}")
                #expect(approval.status == 409, "\(approval.text)")
                #expect(approval["code"] == "not_eligible")
                #expect(try await env.ownerScalar("SELECT status FROM shop_applications WHERE id = '\(id)'", as: String.self) == "pending")
            }
        }
    }

    @Test("applications are limited per /64 for IPv6: addresses of one network share the limit, another network has its own")
    func ipv6SubmissionsShareTheirNetworkLimit() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.security.publicSubmissionLimit
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                for n in 1...limit {
                    let reply = try await client.call(
                        .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Shop \(n)", taxID: "12-34567\(n % 10)\(n / 10)"),
                        headers: ["X-Forwarded-For": "2001:db8:0:1::\(String(n, radix: 16))"])
                    #expect(reply.status == 201, "\(reply.text)")
                }
                let sameNetwork = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "One More"),
                    headers: ["X-Forwarded-For": "2001:db8:0:1:ffff::9"])
                #expect(sameNetwork.status == 429, "another address of the same /64: \(sameNetwork.text)")
                let otherNetwork = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Other Net"),
                    headers: ["X-Forwarded-For": "2001:db8:0:2::1"])
                #expect(otherNetwork.status == 201)
            }
        }
        #expect(ClientAddress.limitKey("2001:db8:0:1:ffff::9") == "2001:db8:0:1::/64")
        #expect(ClientAddress.limitKey("203.0.113.7") == "203.0.113.7")
    }

    @Test("failed checks are stored and named; an ineligible application cannot be approved; a rejected one needs a reason")
    func failedChecks() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let bad = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(
                        legalName: "Closed Account Co", taxID: "07-1234567", account: SimulatedPaymentGateway.closedAccount, city: " "))
                #expect(bad.status == 201, "\(bad.text)")
                #expect(bad.json["eligible"] as? Bool == false)
                let failed = (bad.json["checks"] as? [[String: Any]] ?? []).filter { $0["passed"] as? Bool == false }
                #expect(failed.map { $0["check"] as? String } == ["required_fields", "tax_id_format", "bank_account"])
                let id = try #require(bad["id"])
                #expect(
                    failed.allSatisfy { $0["detail"] as? String == "not_eligible: quote reference \(id) to HealthTrack" },
                    "the applicant learns no detail")
                #expect(!bad.text.contains("account_closed"))
                let reviewed = try await client.call(.get, "/v1/shop-applications/\(id)", token: manager)
                let details = (reviewed.json["checks"] as? [[String: Any]] ?? []).filter { $0["passed"] as? Bool == false }
                #expect((details.first?["detail"] as? String)?.contains("address.city") == true, "the manager reads why")
                #expect((details.last?["detail"] as? String)?.contains("account_closed") == true)
                let approve = try await client.call(.post, "/v1/shop-applications/\(id)/approve", token: manager, json: "{}")
                #expect(approve.status == 409)
                #expect(approve["code"] == "not_eligible")
                #expect(try await env.ownerScalar("SELECT count(*) FROM tenants WHERE slug = 'closed-account-co'", as: Int.self) == 0)

                let noReason = try await client.call(.post, "/v1/shop-applications/\(id)/reject", token: manager, json: "{}")
                #expect(noReason.status == 422)
                let rejected = try await client.call(
                    .post, "/v1/shop-applications/\(id)/reject", token: manager, json: #"{"reason": "bank account closed"}"#)
                #expect(rejected.status == 200)
                #expect(rejected["status"] == "rejected")
                #expect(rejected["decision_reason"] == "bank account closed")

                // A second application for a waiting shop's tax id fails the duplicate check.
                let first = try await client.call(.post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Alpha Gear"))
                #expect(first.json["eligible"] as? Bool == true)
                let duplicate = try await client.call(.post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Alpha Gear 2"))
                let duplicateCheck = (duplicate.json["checks"] as? [[String: Any]] ?? []).first { $0["check"] as? String == "duplicate_shop" }
                #expect(duplicateCheck?["passed"] as? Bool == false)
                #expect(duplicate.json["eligible"] as? Bool == false)
            }
        }
    }

    @Test("bad input changes nothing: an unusable email is 422, a provider with no verdict is 503, and neither stores an application")
    func badInputChangesNothing() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let count = { try await env.ownerScalar("SELECT count(*) FROM shop_applications", as: Int.self) ?? -1 }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let (applications, audit) = (try await count(), try await events())
                let email = try await client.call(.post, "/v1/shop-applications", token: nil, json: ShopForm.json(email: "not-an-email"))
                #expect(email.status == 422)
                #expect(email.text.contains("contact_email"))
                let timeout = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(account: SimulatedPaymentGateway.timeoutAccount))
                #expect(timeout.status == 503)
                #expect(timeout["code"] == "payment_provider_unavailable")
                let unknownField = try await client.call(.post, "/v1/shop-applications", token: nil, json: #"{"legal_name": "x", "admin": true}"#)
                #expect(unknownField.status == 400)
                #expect(try await count() == applications)
                #expect(try await events() == audit)
            }
        }
    }

    @Test("public submissions are limited per address: 429 with Retry-After over the limit; other addresses unaffected")
    func submissionsAreRateLimited() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.security.publicSubmissionLimit
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                let spammer = ["X-Forwarded-For": "203.0.113.9"]
                var statuses: [Int] = []
                for index in 0..<(limit + 2) {
                    let reply = try await client.call(
                        .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Spam \(index)", taxID: "12-00000\(10 + index)"),
                        headers: spammer)
                    statuses.append(reply.status)
                    if reply.status == 429 { #expect(Int(reply.headers[.retryAfter] ?? "") ?? 0 >= 1) }
                }
                #expect(statuses == Array(repeating: 201, count: limit) + [429, 429])
                let elsewhere = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Honest Shop", taxID: "12-7654321"),
                    headers: ["X-Forwarded-For": "198.51.100.4"])
                #expect(elsewhere.status == 201)
            }
        }
    }

    @Test(
        "tax ids, routing numbers and slugs",
        arguments: [
            ("12-3456789", "12-3456789"), ("123456789", "12-3456789"), ("07-1234567", nil), ("1-23456789", nil), ("12-345678", nil),
            ("ab-cdefghi", nil), ("98-7654321", "98-7654321"),
        ])
    func employerIdentificationNumbers(_ text: String, _ expected: String?) {
        #expect(EmployerIdentificationNumber.normalized(text) == expected)
    }

    @Test("ABA routing numbers by their checksum; slugs from legal names")
    func routingNumbersAndSlugs() {
        #expect(BankAccount(holderName: "x", routingNumber: "110000000", accountNumber: "1").hasValidRoutingNumber)
        #expect(BankAccount(holderName: "x", routingNumber: "021000021", accountNumber: "1").hasValidRoutingNumber)
        #expect(!BankAccount(holderName: "x", routingNumber: "021000022", accountNumber: "1").hasValidRoutingNumber)
        #expect(!BankAccount(holderName: "x", routingNumber: "11000000", accountNumber: "1").hasValidRoutingNumber)
        #expect(ShopSlug.from("Northwind Sports, LLC") == "northwind-sports-llc")
        #expect(ShopSlug.from("  Ünïcode & Co. ") == "n-code-co")
        #expect(ShopSlug.from("Ω") == "shop")
        // Slugs and skus, checked without regular expressions, agree with the database's patterns.
        for (slug, valid) in [
            ("ab", true), ("a", false), ("-ab", false), ("a-", true), ("A1", false), ("ä1", false), (String(repeating: "a", count: 63), true),
            (String(repeating: "a", count: 64), false), ("9lives", true),
        ] {
            #expect(Validation.isSlug(slug) == valid, "\(slug)")
        }
        for (sku, valid) in [
            ("A", true), ("a.b_c-D9", true), (".a", false), ("a b", false), (String(repeating: "x", count: 64), true),
            (String(repeating: "x", count: 65), false), ("", false), ("é", false),
        ] {
            #expect(GoodFields.isSKU(sku) == valid, "\(sku)")
        }
    }
}

@Suite("Goods: a partner's catalog, If-Match on updates, the app's catalog read")
struct GoodsTests {
    @Test("updates need If-Match (428 without, 412 stale); status moves draft → active → archived; only active goods are in the catalog")
    func updatesAndCatalog() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/goods", token: partner.staffToken,
                    json:
                        #"{"sku": "MAT-1", "name": "Cork yoga mat", "category": "mats", "price_cents": 4900, "price_fitpoints": 5000, "stock": 7, "image_urls": ["https://cdn.example/mat.jpg"]}"#
                )
                #expect(created.status == 201, "\(created.text)")
                let id = try #require(created["id"])
                #expect(created.headers[.eTag] == "\"1\"")
                let taken = try await client.call(
                    .post, "/v1/goods", token: partner.adminToken,
                    json: #"{"sku": "MAT-1", "name": "Again", "category": "mats", "price_cents": 1, "stock": 1}"#)
                #expect(taken.status == 409)
                #expect(taken["code"] == "sku_taken")

                let noMatch = try await client.call(.patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"status": "active"}"#)
                #expect(noMatch.status == 428)
                let stale = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"status": "active"}"#, headers: ["If-Match": "\"9\""])
                #expect(stale.status == 412)
                let invalid = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"stock": -1, "image_urls": ["http://insecure.example/a.jpg"]}"#,
                    headers: ["If-Match": "\"1\""])
                #expect(invalid.status == 422)
                #expect(invalid.text.contains("stock") && invalid.text.contains("image_urls[0]"))
                #expect(try await client.call(.get, "/v1/catalog", token: app).text.contains("MAT-1") == false, "a draft is not in the catalog")

                let active = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"status": "active", "stock": 5}"#, headers: ["If-Match": "\"1\""])
                #expect(active.status == 200, "\(active.text)")
                #expect(active["status"] == "active")
                #expect(active.headers[.eTag] == "\"2\"")
                let catalog = try await client.call(.get, "/v1/catalog?q=yoga", token: app)
                let items = catalog.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1)
                #expect(items.first?["partner_name"] as? String == partner.slug.capitalized)
                #expect(items.first?["in_stock"] as? Bool == true)
                #expect((try await client.call(.get, "/v1/catalog?category=shoes", token: app).json["items"] as? [Any])?.isEmpty == true)
                #expect(try await client.call(.get, "/v1/catalog?q=%25", token: app).status == 422, "too short a search")

                let archived = try await client.call(.post, "/v1/goods/\(id)/archive", token: partner.adminToken)
                #expect(archived.status == 200)
                #expect((try await client.call(.get, "/v1/catalog?q=yoga", token: app).json["items"] as? [Any])?.isEmpty == true)
                let afterArchive = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"stock": 9}"#, headers: ["If-Match": "\"3\""])
                #expect(afterArchive.status == 409)
                #expect(afterArchive["current_state"] == "archived")
                let audited = try await env.ownerScalar(
                    "SELECT string_agg(action, ',' ORDER BY id) FROM audit_events WHERE target_id = '\(id)'", as: String.self)
                #expect(audited == "goods.create,goods.update,goods.archive")
            }
        }
    }

    @Test("a platform role has no shop: creating a good is 422; a manager still reads every partner's goods")
    func platformRoles() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.tokens[.platformAdmin]!
            try await env.withApp { client in
                let refused = try await client.call(
                    .post, "/v1/goods", token: admin, json: #"{"sku": "X", "name": "x", "category": "mats", "price_cents": 1, "stock": 1}"#)
                #expect(refused.status == 422)
                _ = try await client.call(
                    .post, "/v1/goods", token: env.fixture.partners[0].adminToken,
                    json: #"{"sku": "A-1", "name": "A", "category": "mats", "price_cents": 1, "stock": 1}"#)
                _ = try await client.call(
                    .post, "/v1/goods", token: env.fixture.partners[1].adminToken,
                    json: #"{"sku": "B-1", "name": "B", "category": "mats", "price_cents": 1, "stock": 1}"#)
                let all = try await client.call(.get, "/v1/goods", token: env.fixture.tokens[.backendManager]!)
                #expect((all.json["items"] as? [[String: Any]] ?? []).compactMap { $0["sku"] as? String } == ["A-1", "B-1"])
            }
        }
    }
}

@Suite("Partner staff: a partner admin runs its own shop's people")
struct PartnerStaffTests {
    @Test("invite, list, issue a token, disable; never a platform role, never another tenant, never the last admin")
    func partnerAdminManagesItsStaff() async throws {
        try await TestEnvironment.with { env in
            let (a, b) = (env.fixture.partners[0], env.fixture.partners[1])
            try await env.withApp { client in
                let invited = try await client.call(
                    .post, "/v1/operators", token: a.adminToken, json: #"{"email": "picker@\#(a.slug).example", "role": "partner_staff"}"#)
                #expect(invited.status == 201, "\(invited.text)")
                #expect(invited["tenant_id"] == a.tenantID.uuidString.lowercased())
                let staffID = try #require(invited["id"])
                let token = try await client.call(.post, "/v1/tokens", token: a.adminToken, json: #"{"operator_id": "\#(staffID)"}"#)
                let secret = try #require((token.json["secret"] as? String))
                #expect(try await client.call(.get, "/v1/goods", token: secret).status == 200, "the new staff member works")
                let listed = (try await client.call(.get, "/v1/operators", token: a.adminToken).json["items"] as? [[String: Any]]) ?? []
                #expect(listed.contains { $0["id"] as? String == staffID })
                #expect(listed.allSatisfy { $0["tenant_id"] as? String == a.tenantID.uuidString.lowercased() })

                let platformRole = try await client.call(
                    .post, "/v1/operators", token: a.adminToken, json: #"{"email": "boss@\#(a.slug).example", "role": "backend_manager"}"#)
                #expect(platformRole.status == 422)
                let elsewhere = try await client.call(
                    .post, "/v1/operators", token: a.adminToken,
                    json: #"{"email": "spy@\#(a.slug).example", "role": "partner_staff", "tenant_id": "\#(b.tenantID.uuidString.lowercased())"}"#)
                #expect(elsewhere.status == 422)
                #expect(
                    try await client.call(.post, "/v1/operators/\(staffID)/disable", token: b.adminToken, json: #"{"reason": "not mine"}"#).status
                        == 404)
                #expect(
                    try await client.call(.post, "/v1/operators", token: secret, json: #"{"email": "x@\#(a.slug).example", "role": "partner_staff"}"#)
                        .status == 403, "staff do not invite")

                let disabled = try await client.call(
                    .post, "/v1/operators/\(staffID)/disable", token: a.adminToken, json: #"{"reason": "left the shop"}"#)
                #expect(disabled["status"] == "disabled")
                #expect(try await client.call(.get, "/v1/goods", token: secret).status == 401, "a disabled member's token is refused at once")
            }
        }
    }
}
