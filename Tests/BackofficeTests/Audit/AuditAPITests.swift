import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Audit over HTTP")
struct AuditAPITests {
    @Test("list filters and pages; export streams every event as JSON lines; verify reports intact")
    func listExportVerify() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            for round in 1...3 {
                _ = try await env.database.run(
                    TransitionAccount(customerID: customer.id, move: .lock, reason: "r\(round)"),
                    context: env.context(.backendManager))
                _ = try await env.database.run(
                    TransitionAccount(customerID: customer.id, move: .unlock, reason: "r\(round)"),
                    context: env.context(.backendManager))
            }
            let auditor = env.fixture.tokens[.auditor]!
            let total = try #require(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self))
            try await env.withApp { client in
                let locks = try await client.call(
                    .get, "/v1/audit/events?action=accounts.lock&target_id=\(customer.id)", token: auditor)
                let items = locks.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 3)
                #expect(Set(items.compactMap { $0["reason"] as? String }) == ["r1", "r2", "r3"])

                var pages = 0
                var ids: [Int] = []
                var cursor: String?
                repeat {
                    let page = try await client.call(
                        .get, "/v1/audit/events?limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""), token: auditor)
                    ids += (page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                    cursor = page.json["next_cursor"] as? String
                    pages += 1
                } while cursor != nil
                #expect(ids.count == total)
                #expect(ids == ids.sorted())
                #expect(pages == (total + 6) / 7)

                let export = try await client.call(.get, "/v1/audit/export", token: auditor)
                #expect(export.status == 200)
                let lines = export.text.split(separator: "\n")
                #expect(lines.count == total)
                let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
                #expect(first?["hash"] is String && first?["chain"] is String)

                let verify = try await client.call(.post, "/v1/audit/verify", token: auditor, json: "{}")
                #expect(verify.json["intact"] as? Bool == true)
                #expect(verify.json["events"] as? Int == total)

                let manager = try await client.call(
                    .get, "/v1/audit/export", token: env.fixture.tokens[.backendManager]!)
                #expect(manager.status == 403, "backend managers read the log but do not export it")
            }
        }
    }

    @Test("export pages through the log in constant-size pages")
    func exportPages() async throws {
        try await TestEnvironment.with { env in
            let total = try #require(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self))
            var chunks = 0
            var lines = 0
            for try await chunk in AuditLog(database: env.database).export(
                AuditFilter(), context: env.context(.auditor), pageSize: 5)
            {
                chunks += 1
                let count = chunk.filter { $0 == 10 }.count
                #expect(count <= 5)
                lines += count
            }
            #expect(lines == total)
            #expect(chunks == (total + 4) / 5)
        }
    }
}
