import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console shop applications: the queue with its checks, approve, reject with a reason")
struct ConsoleShopsTests {
    @Test(
        """
        a manager sees a waiting application's checks and approves it (a shop and its admin, audited via \
        console); a failed one cannot be approved; rejecting needs a reason and a confirmation
        """
    )
    func queue() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let good = try await client.call(.post, "/v1/shop-applications", token: nil, json: ShopForm.json())
                let goodID = try #require(good.json["id"] as? String)
                let failed = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(legalName: "Bad Tax Co", email: "x@bad.example", taxID: "nope"))
                let failedID = try #require(failed.json["id"] as? String)
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let queue = try await manager.get("/console/shop-applications")
                #expect(
                    queue.status == 200 && queue.text.contains("Northwind Sports LLC")
                        && queue.text.contains("Bad Tax Co"))
                let page = try await manager.get("/console/shop-applications/\(goodID)")
                #expect(page.text.contains("tax id format") && page.text.contains("Approve: open the shop"))
                let failedPage = try await manager.get("/console/shop-applications/\(failedID)")
                #expect(
                    failedPage.text.contains("<span class=\"tag warn\">failed</span>")
                        && !failedPage.text.contains("Approve: open the shop"))
                #expect(
                    try await manager.post("/console/shop-applications/\(failedID)/approve", [:], csrf: page.csrf)
                        .status == 422, "refused in place")

                let approved = try await manager.post(
                    "/console/shop-applications/\(goodID)/approve", ["slug": "northwind"], csrf: page.csrf)
                #expect(approved.status == 303)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM tenants WHERE slug = 'northwind'", as: Int64.self)
                        == 1)
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'shop_applications.approve' AND target_id = \
                    '\(goodID)' AND session_id IS NOT NULL
                    """,
                    as: Int64.self)
                #expect(viaConsole == 1)

                let unconfirmed = try await manager.post(
                    "/console/shop-applications/\(failedID)/reject", ["reason": "Tax id invalid"], csrf: page.csrf)
                #expect(unconfirmed.status == 422 && unconfirmed.text.contains("id=\"confirm_reject-error\""))
                let noReason = try await manager.post(
                    "/console/shop-applications/\(failedID)/reject", ["confirm": "yes"], csrf: page.csrf)
                #expect(noReason.status == 422)
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM shop_applications WHERE id = '\(failedID)'", as: String.self) == "pending")
                let rejected = try await manager.post(
                    "/console/shop-applications/\(failedID)/reject", ["confirm": "yes", "reason": "Tax id invalid"],
                    csrf: page.csrf)
                #expect(rejected.status == 303)
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM shop_applications WHERE id = '\(failedID)'", as: String.self) == "rejected")

                let partner = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[0].admin.operatorID)
                #expect(try await partner.get("/console/shop-applications").status == 403)
            }
        }
    }
}
