import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console FitPoints: a customer's balance, ledger and adjustments")
struct ConsoleFitPointsTests {
    @Test(
        """
        a manager credits a customer with a reason (audited via console); a debit past the balance and an \
        adjustment without a reason are refused in place, changing nothing; an auditor reads the ledger without \
        the form
        """
    )
    func adjust() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let path = "/console/accounts/\(customer.id.text)/fitpoints"
                #expect(
                    try await manager.get("/console/accounts/\(customer.id.text)").text.contains("href=\"\(path)\""))
                let page = try await manager.get(path)
                #expect(page.status == 200 && page.text.contains("Balance <strong>0 FP</strong>"))
                let credited = try await manager.post(
                    path, ["points": "250", "reason": "Goodwill after an outage"], csrf: page.csrf)
                #expect(credited.status == 303)
                let after = try await manager.get(path)
                #expect(
                    after.text.contains("Balance <strong>250 FP</strong>")
                        && after.text.contains("Goodwill after an outage"))
                let balance =
                    "SELECT coalesce((SELECT balance FROM fitpoints_accounts WHERE id = '\(customer.id.text)'), 0)"
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'fitpoints.adjust' AND target_id = \
                    '\(customer.id.text)' AND session_id IS NOT NULL
                    """,
                    as: Int64.self)
                #expect(viaConsole == 1)
                let overdrawn = try await manager.post(
                    path, ["points": "-1000", "reason": "Too much"], csrf: page.csrf)
                #expect(overdrawn.status == 422 && overdrawn.text.contains("id=\"points-error\""), "next to the points")
                let noReason = try await manager.post(path, ["points": "10"], csrf: page.csrf)
                #expect(noReason.status == 422 && noReason.text.contains("id=\"reason-error\""))
                let notANumber = try await manager.post(path, ["points": "lots", "reason": "x"], csrf: page.csrf)
                #expect(notANumber.status == 422)
                #expect(try await env.ownerScalar(balance, as: Int64.self) == 250, "the refusals changed nothing")

                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let read = try await auditor.get(path)
                #expect(read.status == 200 && read.text.contains("250 FP") && !read.text.contains("Adjust the balance"))
                #expect(try await auditor.post(path, ["points": "1", "reason": "x"], csrf: read.csrf).status == 403)
            }
        }
    }
}
