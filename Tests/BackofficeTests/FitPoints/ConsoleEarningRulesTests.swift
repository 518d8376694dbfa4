import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console earning rules: a dry run over past activity, shown in place, before saving")
struct ConsoleEarningRulesTests {
    @Test(
        """
        a manager changes a rate, sees what it would have paid (nothing saved), then saves it with a reason: held \
        (audited via console, pending on the page) until a platform admin approves it; a bad cap is refused next \
        to its field; an auditor may not save
        """
    )
    func dryRunThenSave() async throws {
        try await TestEnvironment.with { env in
            _ = try await env.database.runAsSystem(
                SetEarningRules(
                    .init(
                        metrics: [.init(metric: "steps", pointsPerUnit: 0.01, dailyCap: 100)],
                        events: [.init(name: "subscription_renewal", points: 200)])),
                context: OperationContext.system("test", policies: env.policies))
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let page = try await manager.get("/console/earning-rules")
                #expect(page.status == 200)
                #expect(
                    page.text.contains("id=\"steps_rate\" name=\"steps_rate\" inputmode=\"decimal\" value=\"0.01\""),
                    "the rules in force, filled in")
                let sets = try await env.auditCount("fitpoints_rules.set")
                let fields = [
                    "steps_rate": "0.02", "steps_cap": "150", "events": "subscription_renewal 200", "badges": "",
                    "days": "30",
                ]
                let bad = try await manager.post(
                    "/console/earning-rules/preview", fields.merging(["steps_cap": "-5"]) { $1 }, csrf: page.csrf)
                #expect(bad.status == 422 && bad.text.contains("id=\"steps_cap-error\""), "next to the cap")
                let preview = try await manager.post("/console/earning-rules/preview", fields, csrf: page.csrf)
                #expect(preview.status == 200)
                #expect(
                    preview.text.contains("Dry run: what these rules would have paid (nothing was saved)")
                        && preview.text.contains("<code>steps</code>"))
                #expect(try await env.auditCount("fitpoints_rules.set") == sets, "a dry run saves nothing")
                #expect(
                    preview.text.contains("name=\"steps_rate\" value=\"0.02\""), "the save form carries the same rules")
                let saved = try await manager.post(
                    "/console/earning-rules", fields.merging(["reason": "Winter push"]) { $1 }, csrf: page.csrf)
                #expect(saved.status == 303 && saved.location == "/console/earning-rules")
                let viaConsole = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'approvals.request' AND session_id IS NOT NULL",
                    as: Int64.self)
                #expect(viaConsole == 1)
                #expect(try await env.auditCount("fitpoints_rules.set") == sets, "held: nothing set yet")
                let pending = try await manager.get("/console/earning-rules")
                #expect(
                    pending.text.contains("id=\"pending-approvals\"")
                        && pending.text.contains(
                            "Set the earning rules: steps 0.02 a unit, at most 150 a day; "
                                + "event subscription_renewal 200"
                        ),
                    "the pending change, in words")
                #expect(pending.text.contains("value=\"0.01\""), "the rules in force stay")
                let request = try #require(
                    try await env.ownerScalar(
                        "SELECT id::text FROM approval_requests WHERE reason = 'Winter push'", as: String.self))
                let approved = try await ApprovalTests().decide(
                    client, env.fixture.tokens[.platformAdmin]!, request, "approve")
                #expect(approved.status == 200)
                #expect(try await manager.get("/console/earning-rules").text.contains("value=\"0.02\""))

                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let read = try await auditor.get("/console/earning-rules")
                #expect(read.status == 200)
                #expect(try await auditor.post("/console/earning-rules", fields, csrf: read.csrf).status == 403)
            }
        }
    }
}
