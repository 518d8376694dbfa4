import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Every export names its schema in the contract, and what it writes validates against it")
struct ExportContractTests {
    /// The exports the contract must keep naming (a stream lost from the contract fails the suite).
    static let known: Set<String> = [
        "exportAuditEvents", "exportHealthAccessLog", "exportStatementsOfReasons", "exportGoods",
        "exportCustomerData",
    ]

    /// Runs `ops/lib/validate-export.py` (jsonschema, JSON Schema 2020-12 with formats) on `text`.
    static func validate(_ text: String, against schema: String, lines: Bool) throws -> (status: Int32, output: String)
    {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = projectRoot.appendingPathComponent("ops/lib/validate-export.py").path
        let run = try ChildProcess.run(
            [try TestPython.path.get(), script, schema, file.path] + (lines ? ["--lines"] : []))
        return (run.status, run.output)
    }

    @Test(
        """
        every JSON Lines body the contract declares (answers and requests) names its line's schema in \
        x-item-schema, a schema of the contract; the customer data document names CustomerDataExport
        """
    )
    func named() throws {
        let contract = try Contract.load()
        let schemas = (contract.document["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        var found = 0
        func walk(_ node: Any, _ path: String) {
            if let list = node as? [Any] {
                for (index, value) in list.enumerated() { walk(value, "\(path)[\(index)]") }
                return
            }
            guard let map = node as? [String: Any] else { return }
            for (key, value) in map {
                if key == "content", let content = value as? [String: Any] {
                    for (type, media) in content where ContractStream.linesTypes.contains(type) {
                        found += 1
                        let ref = ((media as? [String: Any])?["x-item-schema"] as? [String: Any])?["$ref"] as? String
                        #expect(
                            ref.map { schemas[Contract.name($0)] != nil } == true,
                            "\(path) \(type): x-item-schema \(ref ?? "missing")")
                    }
                }
                walk(value, "\(path)/\(key)")
            }
        }
        walk(contract.document["paths"] as Any, "")
        #expect(found >= 5, "the JSON Lines bodies (four exports and the goods import): \(found)")
        let streams = contract.streams
        #expect(Self.known.isSubset(of: Set(streams.map(\.operation.id))), "\(streams)")
        #expect(streams.first { $0.operation.id == "exportCustomerData" }?.schema == "CustomerDataExport")
    }

    @Test(
        """
        every export, called by a role its policy allows, writes what its named schema says, validated by a third \
        party's validator (jsonschema): lines without null fields the schema leaves out, lower-case ids, RFC 3339 \
        times; the validator refuses a line doctored to break the schema
        """
    )
    func validated() async throws {
        let streams = try Contract.load().streams
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let partner = env.fixture.partners[0]
            let tokens: [(Role, String)] =
                [Role.auditor, .platformAdmin, .appService, .moderator, .backendManager].map {
                    ($0, env.fixture.tokens[$0]!)
                } + [(.partnerAdmin, partner.adminToken)]
            try await env.withApp { client in
                try await CustomerRightsTests.everything(env, client, shop, tag: "contract")
                // The app's own id for its post (a string the API keeps as given).
                let caseID = try await ModerationAPITests.held(
                    client, env, shop.customer, id: "post-contract", text: "kys loser")
                let decision = #"{"decision":"remove","ground":"safety","explanation":"Told a member to die."}"#
                let decided = try await ModerationAPITests.decide(
                    client, caseID, token: env.fixture.tokens[.moderator]!, json: decision)
                #expect(decided.status == 201, "\(decided.text)")
                for stream in streams {
                    let schema = try #require(stream.schema, "\(stream) names no schema")
                    let action = try #require(stream.operation.action.flatMap(Action.init(rawValue:)))
                    let (role, token) = try #require(
                        tokens.first { env.policies.access.allows($0.0.rawValue, action) }, "\(stream): no role")
                    var path = try ContractFixture.fill(stream.operation, ids: ["customer_id": shop.customer.id.text])
                    if ["exportGoods", "exportOrders"].contains(stream.operation.id) { path += "?format=jsonl" }
                    let reply = try await client.call(
                        stream.operation.method, path, token: token, headers: stream.operation.headers)
                    let said = "\(role.rawValue) → \(stream): \(reply.status) \(reply.text.prefix(300))"
                    #expect(reply.status == 200, "\(said)")
                    #expect(reply.headers[.contentType]?.hasPrefix(stream.mediaType) == true, "\(said)")
                    let written = reply.text.split(separator: "\n").filter { !$0.isEmpty }
                    #expect(!written.isEmpty, "\(said): something to validate")
                    let verdict = try Self.validate(reply.text, against: schema, lines: stream.lines)
                    #expect(verdict.status == 0, "\(stream) against \(schema): \(verdict.output.prefix(2_000))")
                    #expect(ContractTests.upperCaseIDs(reply.text).isEmpty, "\(said): ids in lower case")
                }
            }
        }
        let doctored =
            #"{"id":1,"chain":"c","seq":1,"occurred_at":"2026-11-28T00:00:00.000000Z","tenant_id":"#
            + #""00000000-0000-0000-0000-000000000000","actor_id":null,"actor_role":"system","action":"a","#
            + #""target_type":"t","target_id":"x","request_id":"r","policy_digest":"d","prev_hash":"","hash":"","#
            + #""canonical":"{}"}"#
        let refused = try Self.validate(doctored, against: "AuditExportLine", lines: true)
        #expect(refused.status == 1 && refused.output.contains("actor_id"), "\(refused.output)")
    }
}
