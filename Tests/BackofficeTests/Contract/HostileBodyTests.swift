import Foundation
import HTTPTypes
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension ContractTests {
    @Test(
        """
        hostile bodies on every operation that takes one: a clear 4xx problem and nothing changed; SQL \
        metacharacters are data
        """
    )
    func hostileBodies() async throws {
        let contract = try Contract.load()
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let admin = env.fixture.tokens[.platformAdmin]!
            let app = env.fixture.tokens[.appService]!
            // One owner connection for every before-and-after look (a connection per look cost most of the test's
            // time).
            try await env.owner.withConnection(logger: testLogger) { owner in
                try await env.withApp { client in
                    for operation in contract.operations {
                        guard let schema = operation.bodySchema,
                            let action = operation.action.flatMap(Action.init(rawValue:))
                        else { continue }
                        let token = env.policies.access.allows(Role.platformAdmin.rawValue, action) ? admin : app
                        let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                        var sample = contract.sampleBody(schema, ids: ids.partnerA) as? [String: Any] ?? [:]
                        sample["no_such_field"] = "x"
                        let unknownField = try JSONSerialization.data(withJSONObject: sample)
                        let settings = ServerSettings(
                            host: "", port: 0, databaseURL: env.appURL, policiesDirectory: URL(fileURLWithPath: "."))
                        let limit = settings.bulkPaths.contains(path) ? settings.maxBulkBodySize : settings.maxBodySize
                        let hostile: [(String, [UInt8], Int)] = [
                            ("an unknown field", Array(unknownField), 400),
                            ("deeply nested JSON", Array(String(repeating: "[", count: 100_000).utf8), 400),
                            ("invalid UTF-8", [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], 400),
                            (
                                "an oversized body",
                                Array(#"{"reason":""#.utf8) + [UInt8](repeating: 0x61, count: limit + 1)
                                    + Array(#""}"#.utf8), 413
                            ),
                        ]
                        for (what, bytes, expected) in hostile {
                            let before = try await Self.snapshot(owner)
                            let reply = try await client.send(
                                operation.method, path, token: token, bytes: bytes, headers: operation.headers)
                            let said = "\(operation) with \(what): \(reply.status) \(reply.text.prefix(200))"
                            #expect(reply.status == expected, "\(said)")
                            #expect(reply.headers[.contentType] == "application/problem+json", "\(said)")
                            let after = try await Self.snapshot(owner)
                            #expect(after == before, "nothing changed (audit count, rows, versions, balances): \(said)")
                        }
                        // Every string field carrying SQL: stored or refused as data, never executed, never a 5xx.
                        let injected = Self.replacingStrings(
                            in: contract.sampleBody(schema, ids: [:]), with: "x'); DROP TABLE customers; --")
                        let reply = try await client.send(
                            operation.method, path, token: token,
                            bytes: Array(try JSONSerialization.data(withJSONObject: injected)),
                            headers: operation.headers)
                        #expect(
                            reply.status < 500,
                            "\(operation) with SQL in every string: \(reply.status) \(reply.text.prefix(200))")
                    }
                }
            }
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM customers", as: Int.self) ?? 0 > 0,
                "the customers table is still there")
        }
    }

    /// The audit log's size, every row of the tables whose rows carry a version (the fixture's
    /// resources, whole, with their versions) and every FitPoints account's balance: what a
    /// refused change must leave.
    static func snapshot(_ owner: PostgresConnection) async throws -> String {
        var text = ""
        for try await value in try await owner.query(PostgresQuery(unsafeSQL: snapshotSQL), logger: testLogger).decode(
            String.self)
        {
            text = value
        }
        return text
    }

    static let snapshotSQL = """
        SELECT (SELECT count(*) FROM audit_events)::text || E'\\n' || coalesce(string_agg(line, E'\\n' ORDER BY line),
            '') FROM (
            SELECT 'tenants ' || row_to_json(t)::text AS line FROM tenants t
            UNION ALL SELECT 'operators ' || row_to_json(t)::text FROM operators t
            UNION ALL SELECT 'customers ' || row_to_json(t)::text FROM customers t
            UNION ALL SELECT 'system_messages ' || row_to_json(t)::text FROM system_messages t
            UNION ALL SELECT 'content_policies ' || row_to_json(t)::text FROM content_policies t
            UNION ALL SELECT 'fitpoints_rule_sets ' || row_to_json(t)::text FROM fitpoints_rule_sets t
            UNION ALL SELECT 'challenges ' || row_to_json(t)::text FROM challenges t
            UNION ALL SELECT 'shop_applications ' || row_to_json(t)::text FROM shop_applications t
            UNION ALL SELECT 'shop_profiles ' || row_to_json(t)::text FROM shop_profiles t
            UNION ALL SELECT 'goods ' || row_to_json(t)::text FROM goods t
            UNION ALL SELECT 'orders ' || row_to_json(t)::text FROM orders t
            UNION ALL SELECT 'fitpoints_accounts ' || id || ' ' || balance FROM fitpoints_accounts) s
        """

    static func replacingStrings(in value: Any, with text: String) -> Any {
        switch value {
        case let object as [String: Any]: object.mapValues { replacingStrings(in: $0, with: text) }
        case let array as [Any]: array.map { replacingStrings(in: $0, with: text) }
        case is String: text
        default: value
        }
    }
}
