import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Goods: archive up to 500 at once, with a dry run")
struct BulkGoodsArchiveTests {
    /// `count` active goods of `partner`, made through the use cases.
    static func goods(_ env: TestEnvironment, partner index: Int, count: Int) async throws -> [UUID] {
        let partner = env.fixture.partners[index]
        let admin = OperationContext(principal: partner.admin, requestID: "t", sourceIP: nil, policies: env.policies)
        var ids: [UUID] = []
        for number in 0..<count {
            let good = try await env.database.run(
                CreateGood(
                    sku: "BULK-\(index)-\(number)",
                    fields: GoodFields(
                        name: "Bulk \(number)", description: nil, category: "gear", priceCents: 100,
                        priceFitPoints: nil, stock: 10, imageURLs: nil)),
                context: admin)
            ids.append(good.id)
        }
        return ids
    }

    static func body(_ ids: [UUID], dryRun: Bool = false) -> String {
        #"{"dry_run": \#(dryRun), "good_ids": [\#(ids.map { "\"\($0.text)\"" }.joined(separator: ", "))]}"#
    }

    /// Each outcome of a bulk answer as "outcome state problem-code".
    static func outcomes(_ reply: Reply) -> [String] {
        (reply.json["outcomes"] as? [[String: Any]] ?? []).map { outcome in
            let code = (outcome["problem"] as? [String: Any])?["code"] as? String
            return [outcome["outcome"] as? String, outcome["state"] as? String, code].compactMap { $0 }
                .joined(separator: " ")
        }
    }

    @Test(
        """
        a dry run says what each of 20 goods would do and changes nothing; then the 20 are archived in one go, \
        each its own audited archive; another shop's good is not found and left as it was; a repeat is refused
        """
    )
    func archiveTwenty() async throws {
        try await TestEnvironment.with { env in
            let ids = try await Self.goods(env, partner: 0, count: 20)
            let foreign = try await Self.goods(env, partner: 1, count: 1)
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                let path = "/v1/goods/bulk-archive"
                let dry = try await client.call(.post, path, token: admin, json: Self.body(ids + foreign, dryRun: true))
                #expect(dry.status == 200 && dry.json["done"] as? Int == 20 && dry.json["refused"] as? Int == 1)
                #expect(
                    Self.outcomes(dry) == Array(repeating: "would_do archived", count: 20) + ["refused not_found"],
                    "in the order asked")
                #expect(try await env.auditCount("goods.archive") == 0, "a dry run changes nothing")

                let done = try await client.call(.post, path, token: admin, json: Self.body(ids + foreign))
                #expect(done.json["done"] as? Int == 20 && done.json["refused"] as? Int == 1, "\(done.text)")
                #expect(try await env.auditCount("goods.archive") == 20)
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM goods WHERE id = '\(foreign[0].text)'", as: String.self) == "draft")
                let again = try await client.call(.post, path, token: admin, json: Self.body(Array(ids.prefix(2))))
                #expect(Self.outcomes(again) == ["refused invalid_transition", "refused invalid_transition"])
                #expect(try await env.auditCount("goods.archive") == 20)
            }
        }
    }

    @Test(
        """
        two bulks of the same 20 goods at once archive each once; 501 goods, a good named twice, none, or a \
        malformed id are refused before any change; an auditor may not
        """
    )
    func concurrentAndRefused() async throws {
        try await TestEnvironment.with { env in
            let ids = try await Self.goods(env, partner: 0, count: 20)
            let admin = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                let path = "/v1/goods/bulk-archive"
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<2 {
                        group.addTask { try await client.call(.post, path, token: admin, json: Self.body(ids)) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.compactMap { $0.json["done"] as? Int }.reduce(0, +) == 20, "\(replies.map(\.text))")
                #expect(try await env.auditCount("goods.archive") == 20)
                for body in [
                    Self.body((0..<501).map { _ in UUID() }), Self.body([ids[0], ids[0]]), Self.body([]),
                    #"{"good_ids": ["not-a-uuid"]}"#,
                ] {
                    let refused = try await client.call(.post, path, token: admin, json: body)
                    #expect(refused.status == 422 || refused.status == 400, "\(refused.text)")
                }
                #expect(try await env.auditCount("goods.archive") == 20)
                let auditor = env.fixture.tokens[.auditor]!
                #expect(try await client.call(.post, path, token: auditor, json: Self.body(ids)).status == 403)
            }
        }
    }

    @Test(
        """
        the console: the goods list has a box for each good not archived; the ticked goods are checked first \
        (nothing changed), then archived from the check's page; none ticked is refused in place
        """)
    func consoleBulkArchive() async throws {
        try await TestEnvironment.with { env in
            let ids = try await Self.goods(env, partner: 0, count: 3)
            let (email, password) = try await env.consolePassword(for: env.fixture.partners[0].admin.operatorID!)
            try await env.withApp { client in
                var browser = ConsoleClient(client)
                _ = try await browser.signIn(email, password)
                let list = try await browser.get("/console/goods")
                #expect(list.text.contains(#"name="good_\#(ids[0].text)" value="yes""#))
                let ticked = ["good_\(ids[0].text)": "yes", "good_\(ids[1].text)": "yes"]
                let check = try await browser.post(
                    "/console/goods/bulk-archive", ticked.merging(["dry_run": "yes"]) { a, _ in a }, csrf: list.csrf)
                #expect(check.status == 200 && check.text.contains("2 would be archived, 0 refused."), "\(check.text)")
                #expect(try await env.auditCount("goods.archive") == 0)
                #expect(check.text.contains(#"<input type="hidden" name="good_\#(ids[1].text)" value="yes">"#))
                let done = try await browser.post(
                    "/console/goods/bulk-archive", ticked.merging(["dry_run": "no"]) { a, _ in a }, csrf: check.csrf)
                #expect(done.text.contains("2 archived, 0 refused."), "\(done.text)")
                #expect(try await env.auditCount("goods.archive") == 2)
                let after = try await browser.get("/console/goods")
                #expect(!after.text.contains(#"name="good_\#(ids[0].text)""#), "an archived good has no box")
                let none = try await browser.post("/console/goods/bulk-archive", ["dry_run": "yes"], csrf: after.csrf)
                #expect(none.status == 422 && none.text.contains("Select 1 to 500 goods"))
            }
        }
    }
}
