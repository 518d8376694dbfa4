import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A shop application as the public form sends it.
enum ShopForm {
    static func json(
        legalName: String = "Northwind Sports LLC", email: String = "owner@northwind.example",
        taxID: String = "12-3456789",
        routing: String = "110000000", account: String = SimulatedPaymentGateway.verifiedAccount,
        city: String = "Portland"
    ) -> String {
        """
        {"legal_name": "\(legalName)", "contact_email": "\(email)", "tax_id": "\(taxID)",
         "address": {"line1": "1 Harbor Way", "city": "\(city)", "region": "OR", "postal_code": "97201", \
        "country": "us"},
         "payout_bank_account": {"holder_name": "Northwind Sports LLC", "routing_number": "\(routing)", \
        "account_number": "\(account)"}}
        """
    }
}

@Suite("Shops: the public application, its checks, approval into a working partner")
struct ShopApplicationTests {
    @Test(
        """
        application → checks → approval → the new partner admin works with the delivered token, creates goods, \
        sees only its tenant; the other partner's goods are 404
        """
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
                #expect(
                    checks.map { $0["check"] as? String } == [
                        "required_fields", "tax_id_format", "duplicate_shop", "bank_account",
                    ])
                #expect(checks.allSatisfy { $0["passed"] as? Bool == true })
                #expect((applied.json["payout_account"] as? [String: Any])?["last4"] as? String == "6789")
                let id = try #require(applied.json["id"] as? String)
                // The account number is kept nowhere: not in the application, not in the audit log.
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM shop_applications WHERE row_to_json(shop_applications)::text LIKE \
                        '%\(SimulatedPaymentGateway.verifiedAccount)%'
                        """,
                        as: Int.self) == 0)
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE row_to_json(audit_events)::text LIKE \
                        '%\(SimulatedPaymentGateway.verifiedAccount)%'
                        """,
                        as: Int.self) == 0)
                #expect(
                    try await env.ownerScalar(
                        """
                        SELECT count(*) FROM audit_events WHERE action = 'shop_applications.apply' AND actor_role \
                        = 'anonymous' AND target_id = '\(id)'
                        """,
                        as: Int.self) == 1)
                // Nor the applicant's contact email and tax id: the log outlives the application, and auditors read it.
                for personal in ["owner@northwind.example", "12-3456789", "123456789"] {
                    #expect(
                        try await env.ownerScalar(
                            """
                            SELECT count(*) FROM audit_events WHERE row_to_json(audit_events)::text LIKE \
                            '%\(personal)%'
                            """,
                            as: Int.self) == 0,
                        "\(personal) in the audit log")
                }

                let waiting = try await client.call(.get, "/v1/shop-applications?status=pending", token: manager)
                #expect((waiting.json["items"] as? [[String: Any]])?.contains { $0["id"] as? String == id } == true)

                let code = try #require(
                    applied.json["claim_code"] as? String, "the applicant's answer holds its claim code")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM shop_applications WHERE claim_hash = sha256('\(code)'::bytea)",
                        as: Int.self) == 1
                )
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE row_to_json(audit_events)::text LIKE '%\(code)%'",
                        as: Int.self) == 0)
                let early = try await client.call(
                    .post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(early.status == 409 && early["code"] == "not_approved", "\(early.text)")

                let approved = try await client.call(
                    .post, "/v1/shop-applications/\(id)/approve", token: manager, json: #"{"reason": "checks passed"}"#,
                    headers: ["Idempotency-Key": "approve-northwind"])
                #expect(approved.status == 200, "\(approved.text)")
                let tenant = try #require((approved.json["tenant"] as? [String: Any])?["id"] as? String)
                #expect((approved.json["tenant"] as? [String: Any])?["slug"] as? String == "northwind-sports-llc")
                #expect((approved.json["admin"] as? [String: Any])?["role"] as? String == "partner_admin")
                #expect((approved.json["admin"] as? [String: Any])?["email"] as? String == "owner@northwind.example")
                #expect(
                    approved.json["token"] == nil && !approved.text.contains("bo_"),
                    "the manager is handed no credential")
                #expect((approved.json["application"] as? [String: Any])?["status"] as? String == "approved")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM tokens WHERE tenant_id = '\(tenant)'", as: Int.self)
                        == 0)
                let again = try await client.call(
                    .post, "/v1/shop-applications/\(id)/approve", token: manager, json: "{}")
                #expect(again.status == 409)
                #expect(again["current_state"] == "approved")

                // The applicant claims its shop once: the first admin's token.
                let wrong = try await client.call(
                    .post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"sc_guess"}"#)
                #expect(wrong.status == 403 && wrong["code"] == "claim_refused", "\(wrong.text)")
                let claimed = try await client.call(
                    .post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(claimed.status == 201, "\(claimed.text)")
                #expect(claimed.headers[.cacheControl] == "no-store")
                let secret = try #require(claimed["secret"])
                let twice = try await client.call(
                    .post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(twice.status == 403 && twice["code"] == "claim_refused", "single use")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM tokens WHERE tenant_id = '\(tenant)'", as: Int.self)
                        == 1)

                // The new partner admin works with the claimed token.
                let me = try await client.call(.get, "/v1/me", token: secret)
                #expect(me.status == 200)
                #expect(me["tenant_id"] == tenant)
                let created = try await client.call(
                    .post, "/v1/goods", token: secret,
                    json:
                        #"""
                        {"sku": "NW-BOTTLE", "name": "Steel bottle", "category": "hydration",\#
                         "price_cents": 2500, "stock": 40}
                        """#
                )
                #expect(created.status == 201, "\(created.text)")
                #expect(created["tenant_id"] == tenant)
                #expect(created["status"] == "draft")
                let mine = try await client.call(.get, "/v1/goods", token: secret)
                let skus = (mine.json["items"] as? [[String: Any]] ?? []).map { $0["sku"] as? String }
                #expect(skus == ["NW-BOTTLE"])

                // The other partner's goods: 404 to the new admin (existence not revealed), and not listed.
                let foreign = try await client.call(
                    .post, "/v1/goods", token: other.adminToken,
                    json:
                        #"""
                        {"sku": "OTHER-1", "name": "Their mat", "category": "mats", "price_fitpoints": 900,\#
                         "stock": 3}
                        """#
                )
                #expect(foreign.status == 201)
                let foreignID = try #require(foreign["id"])
                for (method, path, body) in [
                    (HTTPRequest.Method.get, "/v1/goods/\(foreignID)", nil),
                    (.patch, "/v1/goods/\(foreignID)", #"{"stock": 0}"#),
                    (.post, "/v1/goods/\(foreignID)/archive", nil),
                ] {
                    let reply = try await client.call(
                        method, path, token: secret, json: body, headers: ["If-Match": "\"1\""])
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
                let applied = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Late Co"))
                let (id, code) = (try #require(applied["id"]), try #require(applied["claim_code"]))
                #expect(
                    try await client.call(
                        .post, "/v1/shop-applications/\(id)/approve", token: env.fixture.tokens[.backendManager]!,
                        json: "{}"
                    )
                    .status
                        == 200)
                env.clock.advance(by: 15 * 24 * 3600)
                let late = try await client.call(
                    .post, "/v1/shop-applications/\(id)/claim", token: nil, json: #"{"claim_code":"\#(code)"}"#)
                #expect(late.status == 403 && late["code"] == "claim_refused", "\(late.text)")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM tokens WHERE name = 'claimed by the applicant'", as: Int.self) == 0)
            }
        }
    }

    @Test(
        """
        an applicant is never told which shop has its tax id; approval checks again and refuses a duplicate that \
        appeared since
        """
    )
    func duplicatesStayPrivateAndAreCheckedAtApproval() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let first = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(legalName: "First Co", taxID: "12-3456789"))
                #expect(first.json["eligible"] as? Bool == true)
                let copycat = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(legalName: "Copy Co", taxID: "12-3456789"))
                #expect(copycat.json["eligible"] as? Bool == false)
                #expect(
                    !copycat.text.contains("application waiting") && !copycat.text.contains("approved shop"),
                    "\(copycat.text)")
                #expect(copycat.text.contains("not_eligible"))
                // A shop with First Co's tax id appears by another path before First Co is approved.
                let id = try #require(first["id"])
                let tenant = env.fixture.partners[1].tenantID.uuidString.lowercased()
                try await env.asOwner(
                    """
                    INSERT INTO shop_profiles (tenant_id, legal_name, contact_email, tax_id, address,
                        payout_account_ref, payout_account_last4,
                        application_id)
                    VALUES ('\(tenant)', 'Elsewhere Co', 'x@elsewhere.example', '12-3456789', '{}'::jsonb, 'ba_x',
                        '6789', '\(try #require(copycat["id"]))')
                    """)
                let approval = try await client.call(
                    .post, "/v1/shop-applications/\(id)/approve", token: manager, json: "{}")
                #expect(approval.status == 409, "\(approval.text)")
                #expect(approval["code"] == "not_eligible")
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM shop_applications WHERE id = '\(id)'", as: String.self) == "pending")
            }
        }
    }

    @Test(
        """
        failed checks are stored and named; an ineligible application cannot be approved; a rejected one needs a \
        reason
        """
    )
    func failedChecks() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let bad = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(
                        legalName: "Closed Account Co", taxID: "07-1234567",
                        account: SimulatedPaymentGateway.closedAccount, city: " "))
                #expect(bad.status == 201, "\(bad.text)")
                #expect(bad.json["eligible"] as? Bool == false)
                let failed = (bad.json["checks"] as? [[String: Any]] ?? []).filter { $0["passed"] as? Bool == false }
                #expect(failed.map { $0["check"] as? String } == ["required_fields", "tax_id_format", "bank_account"])
                let id = try #require(bad["id"])
                #expect(
                    failed.allSatisfy {
                        $0["detail"] as? String == "not_eligible: quote reference \(id) to HealthTrack"
                    },
                    "the applicant learns no detail")
                #expect(!bad.text.contains("account_closed"))
                let reviewed = try await client.call(.get, "/v1/shop-applications/\(id)", token: manager)
                let details = (reviewed.json["checks"] as? [[String: Any]] ?? []).filter {
                    $0["passed"] as? Bool == false
                }
                #expect(
                    (details.first?["detail"] as? String)?.contains("address.city") == true, "the manager reads why")
                #expect((details.last?["detail"] as? String)?.contains("account_closed") == true)
                let approve = try await client.call(
                    .post, "/v1/shop-applications/\(id)/approve", token: manager, json: "{}")
                #expect(approve.status == 409)
                #expect(approve["code"] == "not_eligible")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM tenants WHERE slug = 'closed-account-co'", as: Int.self) == 0)

                let noReason = try await client.call(
                    .post, "/v1/shop-applications/\(id)/reject", token: manager, json: "{}")
                #expect(noReason.status == 422)
                let rejected = try await client.call(
                    .post, "/v1/shop-applications/\(id)/reject", token: manager,
                    json: #"{"reason": "bank account closed"}"#)
                #expect(rejected.status == 200)
                #expect(rejected["status"] == "rejected")
                #expect(rejected["decision_reason"] == "bank account closed")

                // A second application for a waiting shop's tax id fails the duplicate check.
                let first = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Alpha Gear"))
                #expect(first.json["eligible"] as? Bool == true)
                let duplicate = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Alpha Gear 2"))
                let duplicateCheck = (duplicate.json["checks"] as? [[String: Any]] ?? []).first {
                    $0["check"] as? String == "duplicate_shop"
                }
                #expect(duplicateCheck?["passed"] as? Bool == false)
                #expect(duplicate.json["eligible"] as? Bool == false)
            }
        }
    }

    @Test(
        """
        bad input changes nothing: an unusable email is 422, a provider with no verdict is 503, and neither \
        stores an application
        """
    )
    func badInputChangesNothing() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let count = { try await env.ownerScalar("SELECT count(*) FROM shop_applications", as: Int.self) ?? -1 }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let (applications, audit) = (try await count(), try await events())
                let email = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(email: "not-an-email"))
                #expect(email.status == 422)
                #expect(email.text.contains("contact_email"))
                let timeout = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(account: SimulatedPaymentGateway.timeoutAccount))
                #expect(timeout.status == 503)
                #expect(timeout["code"] == "payment_provider_unavailable")
                let unknownField = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: #"{"legal_name": "x", "admin": true}"#)
                #expect(unknownField.status == 400)
                #expect(try await count() == applications)
                #expect(try await events() == audit)
            }
        }
    }
}
