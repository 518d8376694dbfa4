import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console homes: a shop's charts are the sales report's figures; an auditor's and a platform admin's homes")
struct ConsoleHomesTests {
    /// The `data-value`s of the cells of column `column` (from 0, after the day) in the data table of the chart `id`.
    static func tableValues(_ html: String, chart id: String, column: Int) throws -> [Int] {
        let start = try #require(html.range(of: "<figure class=\"chart-figure\" id=\"\(id)\""))
        let end = try #require(html.range(of: "</figure>", range: start.upperBound..<html.endIndex))
        let figure = html[start.upperBound..<end.lowerBound]
        let table = try #require(figure.range(of: "<tbody>"))
        return figure[table.upperBound...].split(separator: "</tr>").dropLast().compactMap { row in
            let values = row.matches(of: #/data-value="(-?[0-9]+)"/#).map { Int($0.output.1)! }
            return values.count > column ? values[column] : nil
        }
    }

    @Test(
        """
        a shop's home plots the sales report's figures (net by day, gross and refunds), each day links to that \
        day's orders, and a bad period is refused by field
        """
    )
    func shopHome() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                var ids: [String] = []
                for (index, quantity) in [1, 3].enumerated() {
                    let placed = try await client.call(
                        .post, "/v1/checkout", token: app, json: shop.checkoutJSON([("BOTTLE", quantity, "usd")]),
                        headers: ["Idempotency-Key": "c-\(index)"])
                    ids.append(try #require(placed["id"]))
                    env.clock.advance(by: 86_400)
                }
                let today = UTCDay(env.clock.now())
                let report = try await client.call(
                    .get, "/v1/reports/sales?from=\(today.advanced(by: -6))&to=\(today)",
                    token: shop.partner.adminToken)
                let rows = try #require(report.json["rows"] as? [[String: Any]])
                let partner = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let home = try await partner.get("/console/home?period=7")
                #expect(home.status == 200)
                #expect(
                    try Self.tableValues(home.text, chart: "net-sales", column: 0)
                        == rows.map { $0["net_cents"] as! Int })
                #expect(
                    try Self.tableValues(home.text, chart: "gross-refunds", column: 0)
                        == rows.map { $0["gross_cents"] as! Int })
                #expect(rows.map { $0["gross_cents"] as! Int }.reduce(0, +) == 10_000)
                #expect(home.text.contains("$100.00"), "the totals card")

                let placedDay = today.advanced(by: -2)
                #expect(home.text.contains("href=\"/console/orders?day=\(placedDay)\""))
                let day = try await partner.get("/console/orders?day=\(placedDay)")
                #expect(day.status == 200 && day.text.contains(String(ids[0].prefix(8))))
                #expect(!day.text.contains(String(ids[1].prefix(8))), "the next day's order is not that day's")

                for bad in ["period=8", "month=2026-13", "period=x"] {
                    let refused = try await partner.get("/console/home?\(bad)")
                    #expect(refused.status == 422, "\(bad)")
                }
                let other = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[1].admin.operatorID)
                let otherHome = try await other.get("/console/home?period=7")
                #expect(try Self.tableValues(otherHome.text, chart: "net-sales", column: 0).allSatisfy { $0 == 0 })
            }
        }
    }

    @Test(
        """
        an auditor's home counts the events by day and family as the log holds them, and shows the last \
        verification (recorded and audited when the API verifies) and the checkpoint's age
        """
    )
    func auditorHome() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let auditor = env.fixture.tokens[.auditor]!
                let heads = try await client.call(.get, "/v1/audit/heads", token: auditor)
                let verified = try await client.call(
                    .post, "/v1/audit/verify", token: auditor, json: "{\"checkpoint\": \(heads.text)}")
                #expect(verified.status == 200 && verified.json["intact"] as? Bool == true, "\(verified.text)")
                #expect(try await env.auditCount("audit.verify") == 1)

                let today = UTCDay(env.clock.now())
                let range = try ReportRange(from: today.advanced(by: -29), through: today)
                let counted = try await env.database.read(
                    DailyAuditActions(range: range), context: env.context(.auditor))
                let direct = try await env.ownerScalar(
                    """
                    SELECT string_agg(family || '=' || n, ',' ORDER BY family) FROM (SELECT split_part(action, '.', 1)
                        AS family, count(*) AS n FROM audit_events GROUP BY 1) x
                    """, as: String.self)
                var totals: [String: Int] = [:]
                for day in counted.values { for (family, n) in day { totals[family, default: 0] += n } }
                #expect(
                    totals.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") == direct)
                let partner = try await env.database.read(
                    DailyAuditActions(range: range),
                    context: OperationContext(
                        principal: env.fixture.partners[0].admin, requestID: "t", sourceIP: nil,
                        policies: env.policies))
                let own = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE tenant_id = '\(env.fixture.partners[0].tenantID)'",
                    as: Int.self)
                #expect(partner.values.reduce(0) { $0 + $1.values.reduce(0, +) } == own, "a shop counts its own chain")

                // A checkpoint "taken" in the future is not recorded: it would look fresh for ever.
                let recorded = try await env.database.read(LatestAuditVerification(), context: env.context(.auditor))
                _ = try await env.database.run(
                    RecordAuditVerification(
                        AuditLog.Report(chains: 1, events: 1, failure: nil),
                        checkpointTakenAt: env.clock.now().addingTimeInterval(86_400 * 365)),
                    context: env.context(.auditor))
                let after = try await env.database.read(LatestAuditVerification(), context: env.context(.auditor))
                #expect(after.checkpointTakenAt == recorded.checkpointTakenAt && recorded.checkpointTakenAt != nil)

                env.clock.advance(by: 3 * 3_600)
                let console = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let home = try await console.get("/console/home")
                #expect(home.status == 200 && home.text.contains("id=\"audit-events\""), "\(home.text)")
                #expect(home.text.contains("Intact") && home.text.contains("3 hours ago"))
                #expect(!home.text.contains("None yet") && home.text.contains("Newest checkpoint compared"))
            }
        }
    }

    @Test("a platform admin's home puts every shop side by side and counts operators and live tokens by role")
    func platformAdminHome() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.platformAdmin]?.operatorID)
                let home = try await admin.get("/console/home?period=90")
                #expect(home.status == 200 && home.text.contains("id=\"shops-side-by-side\""))
                #expect(home.text.contains("Alpha-Shop") && home.text.contains("Beta-Shop"), "\(home.text.prefix(300))")
                #expect(home.text.contains("<td>partner_admin</td><td class=\"num\">2</td>"))
                let roles = try await env.database.read(OperatorsByRole(), context: env.context(.platformAdmin))
                #expect(roles.first { $0.role == "partner_staff" }?.tokens == 2)
            }
        }
    }
}
