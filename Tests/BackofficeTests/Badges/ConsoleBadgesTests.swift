import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console badges")
struct ConsoleBadgesTests {
    @Test(
        """
        a manager creates a badge (audited via console); a taken slug and a bad threshold are refused next to \
        their fields; a partner has no badges page
        """
    )
    func createBadge() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let page = try await manager.get("/console/badges")
                #expect(page.status == 200)
                let fields = ["name": "Marathoner", "slug": "marathoner", "metric": "distance_m", "threshold": "42195"]
                #expect(try await manager.post("/console/badges/new", fields, csrf: page.csrf).status == 303)
                #expect(try await manager.get("/console/badges").text.contains("42,195 distance m in one event"))
                let viaConsole = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'badges.create' AND session_id IS NOT NULL",
                    as: Int64.self)
                #expect(viaConsole == 1)
                let taken = try await manager.post("/console/badges/new", fields, csrf: page.csrf)
                #expect(taken.status == 422 && taken.text.contains("id=\"slug-error\""))
                let bad = try await manager.post(
                    "/console/badges/new", fields.merging(["slug": "other", "threshold": "far"]) { $1 }, csrf: page.csrf
                )
                #expect(bad.status == 422 && bad.text.contains("id=\"threshold-error\""))
                let partner = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[0].admin.operatorID)
                #expect(try await partner.get("/console/badges").status == 403)
            }
        }
    }
}
