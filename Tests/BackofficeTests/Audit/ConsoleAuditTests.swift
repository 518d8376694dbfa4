import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console audit log: filters, an event's before and after, verifying the chain, what partners see")
struct ConsoleAuditTests {
    @Test(
        """
        an auditor filters the log by action and target, opens an event (before and after side by side), and \
        verifies the chain: intact, then broken once an event is edited
        """
    )
    func filterAndVerify() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer("console.audit@example.com")
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "Chargeback dispute"),
                context: env.context(.backendManager))
            try await env.withApp { client in
                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let log = try await auditor.get("/console/audit?action=accounts.lock&target_id=\(customer.id.text)")
                #expect(log.status == 200)
                #expect(log.text.contains("Chargeback dispute"))
                #expect(!log.text.contains("<code>accounts.sync</code>"), "only the action filtered for")
                let eventID = try #require(
                    try await env.ownerScalar(
                        """
                        SELECT id FROM audit_events WHERE action = 'accounts.lock' AND target_id = \
                        '\(customer.id.text)'
                        """,
                        as: Int64.self))
                let event = try await auditor.get("/console/audit/\(eventID)")
                #expect(event.status == 200)
                #expect(event.text.contains("Before") && event.text.contains("After"))
                #expect(event.text.contains("&quot;status&quot; : &quot;locked&quot;"), "the after snapshot, escaped")
                #expect(
                    log.text.contains(
                        "href=\"/console/audit/export?action=accounts.lock&amp;target_id=\(customer.id.text)\""),
                    "the export keeps the filters")
                let export = try await auditor.get(
                    "/console/audit/export?action=accounts.lock&target_id=\(customer.id.text)")
                #expect(export.status == 200)
                #expect(export.headers[.contentDisposition] == "attachment; filename=\"audit-events.jsonl\"")
                let lines = export.text.split(separator: "\n")
                #expect(lines.count == 1, "only the filtered event")
                #expect(
                    lines.allSatisfy { $0.contains("\"action\": \"accounts.lock\"") && $0.contains("\"hash\": ") },
                    "jsonb's text form, as audit export writes it")
                let bad = try await auditor.get("/console/audit?actor_id=not-a-uuid&since=yesterday")
                #expect(bad.status == 200)
                #expect(bad.text.contains("id=\"actor_id-error\"") && bad.text.contains("id=\"since-error\""))
                let intact = try await auditor.get("/console/audit/verify")
                #expect(intact.text.contains("Intact:"))
                try await env.owner.withConnection(logger: testLogger) { connection in
                    try await connection.query("SET session_replication_role = replica", logger: testLogger)
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "UPDATE audit_events SET reason = 'Nothing to see' WHERE id = \(eventID)"),
                        logger: testLogger)
                }
                let broken = try await auditor.get("/console/audit/verify")
                #expect(broken.text.contains("Broken:") && broken.text.contains("edited"))
            }
        }
    }

    @Test(
        """
        a partner admin reads only its own tenant's events; its staff has no audit log (not in the navigation, \
        403 page)
        """
    )
    func partners() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let alpha = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let beta = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[1].admin.operatorID)
                let csrf = try #require(try await beta.get("/console/goods/new").csrf)
                _ = try await beta.post(
                    "/console/goods/new",
                    ["sku": "BETA-AUDIT", "name": "Beta only", "category": "snacks", "price": "1.00", "stock": "1"],
                    csrf: csrf)
                let log = try await alpha.get("/console/audit?action=goods.create")
                #expect(log.status == 200)
                #expect(!log.text.contains("<code>goods.create</code>"), "another tenant's events are not shown")
                let betaLog = try await beta.get("/console/audit?action=goods.create")
                #expect(betaLog.text.contains("<code>goods.create</code>"))
                let staffID = try await env.ownerScalar(
                    """
                    SELECT id FROM operators WHERE tenant_id = '\(env.fixture.partners[0].tenantID)' AND role = \
                    'partner_staff'
                    """,
                    as: UUID.self)
                let staff = try await ConsoleClient.signedIn(env, client, as: staffID)
                #expect(!(try await staff.get("/console/home")).text.contains("/console/audit"))
                #expect(try await staff.get("/console/audit").status == 403)
            }
        }
    }
}
