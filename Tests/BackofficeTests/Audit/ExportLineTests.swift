import Foundation
import NIOCore
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Offline verification's fast reading of exported lines")
struct ExportLineTests {
    static let hostile: [(reason: String, after: String)] = [
        (
            "quote \" backslash \\ slash / tab \t newline \n bell \u{07} del \u{7F}",
            #"{"a": [1, 2.50, -3e2, null, true, {"z": {}}], "é": "東京 🏃"}"#
        ),
        ("Zoë — 東京 🏃 \u{1F3C3}", #""just a string""#),
        ("", "12.5000"),
        ("\u{2028}\u{2029} <script>", "[]"),
    ]

    /// The export's lines for a log holding the hostile events.
    func exportedLines(_ env: TestEnvironment) async throws -> [String] {
        for (index, event) in Self.hostile.enumerated() {
            // With the app's token (so its events carry a token_id; the fixture's, made by the system, carry none).
            _ = try await env.database.run(
                RecordOnly(target: "hostile-\(index)", reason: event.reason, after: event.after),
                context: env.context(.appService))
        }
        var text = ""
        for try await page in AuditLog(database: env.database).export(AuditFilter(), context: env.context(.auditor)) {
            text += String(decoding: page, as: UTF8.self)
        }
        return text.split(separator: "\n").map(String.init)
    }

    func fast(_ line: String) -> ChainedEvent? {
        Array(line.utf8).withUnsafeBytes { ExportLine.event($0) }
    }

    @Test("every line audit export writes is decided byte for byte, and agrees with the full reading")
    func decides() async throws {
        try await TestEnvironment.with { env in
            let lines = try await exportedLines(env)
            #expect(lines.count >= Self.hostile.count)
            #expect(lines.filter { $0.contains("hostile-") }.count == Self.hostile.count)
            for line in lines {
                let event = try #require(fast(line), "\(line)")
                #expect(event.columnsMatch && event.hashMatches, "\(line)")
                let full = try #require(OfflineAuditVerifier.event(from: Data(line.utf8)))
                #expect(
                    (full.id, full.chain, full.seq, full.prevHash, full.hash) == (
                        event.id, event.chain, event.seq, event.prevHash, event.hash
                    ))
                #expect(full.columnsMatch && full.hashMatches)
            }
        }
    }

    @Test(
        """
        the export's lines, written by the server, are byte for byte what jsonb_build_object(…)::text writes, its NULL \
        members left out (as the contract's AuditEvent leaves them out); lines with the NULLs written out, as older \
        exports wrote them, are still decided byte for byte
        """
    )
    func sameAsTheDatabase() async throws {
        try await TestEnvironment.with { env in
            let lines = try await exportedLines(env)
            let sql = """
                SELECT (SELECT jsonb_object_agg(key, value) FROM jsonb_each(line) WHERE value <> 'null')::text,
                    line::text
                FROM (SELECT jsonb_build_object(
                    'id', id, 'occurred_at', to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                    'chain', chain, 'seq', seq, 'tenant_id', tenant_id, 'actor_id', actor_id, 'actor_role', actor_role,
                    'action', action, 'target_type', target_type, 'target_id', target_id, 'request_id', request_id,
                    'source_ip', source_ip, 'reason', reason, 'before', before, 'after', after,
                    'policy_digest', policy_digest, 'token_id', token_id, 'session_id', session_id, 'prev_hash',
                        encode(prev_hash, 'hex'), 'hash', encode(hash, 'hex'),
                    'canonical', convert_from(canonical, 'UTF8')) AS line, id
                  FROM audit_events) events ORDER BY id
                """
            let (database, withNulls) = try await env.owner.withConnection(logger: testLogger) { connection in
                var (lines, withNulls): ([String], [String]) = ([], [])
                for try await (line, full) in try await connection.query(
                    PostgresQuery(unsafeSQL: sql), logger: testLogger
                ).decode((String, String).self) {
                    lines.append(line)
                    withNulls.append(full)
                }
                return (lines, withNulls)
            }
            #expect(withNulls.contains { $0.contains("\"token_id\": null") })
            for (line, full) in zip(lines, withNulls) {
                let (event, older) = (try #require(fast(line)), try #require(fast(full), "\(full)"))
                #expect((event.id, event.hash, event.columnsMatch) == (older.id, older.hash, older.columnsMatch))
            }
            #expect(database.count == lines.count)
            #expect(
                database.contains { $0.contains("\"token_id\": \"") }
                    && database.contains { !$0.contains("\"token_id\"") })
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(!object.values.contains { $0 is NSNull }, "\(line)")
            }
            for (written, expected) in zip(lines, database) { #expect(written == expected) }
        }
    }

    @Test("a reformatted export is left to the full reading, which still finds it intact; an edited field is named")
    func reformatted() async throws {
        try await TestEnvironment.with { env in
            let lines = try await exportedLines(env)
            let compact = try lines.map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
                return String(
                    decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
            // Values whose text changed (nested JSON without jsonb's spaces) are not decided byte for byte.
            let nested = try #require(compact.first { $0.contains("hostile-0") })
            #expect(fast(nested) == nil)
            var verifier = OfflineAuditVerifier()
            for line in compact { verifier.feed(line: Array(line.utf8)) }
            #expect(verifier.finish().failure == nil)

            let index = try #require(lines.firstIndex { $0.contains("hostile-2") })
            let edited = lines[index].replacingOccurrences(of: #""reason": """#, with: #""reason": "x""#)
            #expect(edited != lines[index])
            #expect(fast(edited) == nil)
            var tampered = OfflineAuditVerifier()
            for (position, line) in lines.enumerated() {
                tampered.feed(line: Array((position == index ? edited : line).utf8))
            }
            let failure = tampered.finish().failure
            #expect(failure?.kind == .edited)
            #expect(failure?.eventID == fast(lines[index])?.id)
        }
    }

    @Test("JSON strings: escapes, \\u sequences and surrogate pairs resolve to UTF-8; broken ones are refused")
    func strings() {
        func resolve(_ raw: String) -> String? {
            Array(raw.utf8).withUnsafeBytes { ExportLine.string($0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(resolve(#""a\"b\\c\/d\b\f\n\r\t""#) == "a\"b\\c/d\u{08}\u{0C}\n\r\t")
        #expect(resolve(#""caf\u00e9 \ud83c\udfc3 \u0007""#) == "café 🏃 \u{07}")
        #expect(resolve(#""東京""#) == "東京")
        #expect(resolve(#""\ud83c""#) == nil)
        #expect(resolve(#""\x""#) == nil)
        #expect(resolve(#""unterminated"#) == nil)
    }
}
