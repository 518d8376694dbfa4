import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Reports: a manager's figures follow what the operations did, day by day")
struct ManagerFiguresTests {
    @Test(
        """
        customers by status at each day's end, locks by day and FitPoints issued with the issuance account's \
        balance equal a day-by-day account of the operations; the rebuild finds nothing to mend; the home shows them
        """
    )
    func managerFigures() async throws {
        try await TestEnvironment.with { env in
            let manager = env.context(.backendManager)
            let first = UTCDay(env.clock.now())
            var customers: [Customer] = []
            for _ in 0..<5 { customers.append(try await env.customer()) }
            func move(_ index: Int, _ move: AccountMove) async throws {
                _ = try await env.database.run(
                    TransitionAccount(customerID: customers[index].id, move: move, reason: "test"), context: manager)
            }
            func adjust(_ index: Int, _ points: Int64) async throws {
                _ = try await env.database.run(
                    AdjustFitPoints(customerID: customers[index].id, points: points, reason: "welcome"),
                    context: manager)
            }
            env.clock.advance(by: 86_400)
            try await move(0, .lock)
            try await move(1, .lock)
            try await adjust(2, 500)
            env.clock.advance(by: 86_400)
            try await move(0, .unlock)
            try await move(3, .delete)
            try await adjust(4, 300)
            env.clock.advance(by: 86_400)
            customers.append(try await env.customer())
            try await move(1, .delete)

            let range = try ReportRange(from: first.advanced(by: -1), through: first.advanced(by: 3))
            let counts = try await env.database.read(CustomersOverTime(range: range), context: manager)
            let expected: [[AccountStatus: Int]] = [
                [:], [.active: 5], [.active: 3, .locked: 2], [.active: 3, .locked: 1, .deleted: 1],
                [.active: 4, .deleted: 2],
            ]
            #expect(counts.map { $0.filter { $0.value != 0 } } == expected)
            let direct = try await env.ownerScalar(
                "SELECT string_agg(status || '=' || n, ',' ORDER BY status) FROM (SELECT status, count(*) AS n "
                    + "FROM customers GROUP BY status) x", as: String.self)
            #expect(direct == "active=4,deleted=2", "the last day is the table's count")

            let locks = try await env.database.read(LocksAndAppeals(range: range), context: manager)
            #expect(locks.locks == [first.advanced(by: 1): 2] && locks.openAppeals == 0)

            let flows = try await env.database.read(FitPointsFlows(range: range), context: manager)
            #expect(flows.map(\.issued) == [0, 0, 500, 300, 0])
            #expect(flows.map(\.issuanceBalance) == [0, 0, -500, -800, -800])
            // The issuance account's balance is its transfers' sum (the platform's accounts keep no running balance).
            let issuance = try await env.ownerScalar(
                """
                SELECT sum(CASE WHEN credit_account = a.id THEN amount ELSE -amount END)::bigint
                FROM fitpoints_transfers t JOIN fitpoints_accounts a ON a.kind = 'issuance'
                    AND a.id IN (t.credit_account, t.debit_account)
                """, as: Int64.self)
            #expect(issuance == -800)

            let rebuilt = try await env.database.run(
                RebuildShopRollups(tenantID: nil), context: env.context(.platformAdmin))
            #expect(rebuilt.differed["customers"] == 0 && rebuilt.differed["fitpoints"] == 0, "\(rebuilt)")
            await #expect(throws: DomainError.self) {
                _ = try await env.database.read(
                    CustomersOverTime(range: range),
                    context: OperationContext(
                        principal: env.fixture.partners[0].admin, requestID: "t", sourceIP: nil, policies: env.policies)
                )
            }

            try await env.withApp { client in
                let console = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let home = try await console.get("/console/home?period=7")
                #expect(home.status == 200 && home.text.contains("id=\"customers\""), "\(home.text.prefix(400))")
                #expect(home.text.contains("Active customers") && home.text.contains("id=\"fitpoints-flows\""))
                #expect(try ConsoleHomesTests.tableValues(home.text, chart: "issuance-balance", column: 0).last == -800)
                let lockDay = first.advanced(by: 1)
                let link = lockDay.auditLog(action: "accounts.lock")
                #expect(home.text.contains("href=\"\(link.replacingOccurrences(of: "&", with: "&amp;"))\""))
                // Audit events carry the database's time, which the test's clock does not move: the two
                // locks are in the log on the day the test ran.
                let locks = try await console.get(first.auditLog(action: "accounts.lock"))
                #expect(locks.status == 200)
                #expect(
                    locks.text.components(separatedBy: "<code>accounts.lock</code>").count - 1 == 2,
                    "a day's link opens that day's locks")
                let dayAfter = try await console.get(first.advanced(by: 1).auditLog(action: "accounts.lock"))
                #expect(!dayAfter.text.contains("<code>accounts.lock</code>"), "and not the next day's")
            }
        }
    }
}
