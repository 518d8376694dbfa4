import Foundation
import NIOCore
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Audit canonical bytes built in Swift match PostgreSQL's audit_canonical")
struct AuditCanonicalTests {
    /// Rows of (label, SQL values in the canonical function's argument order): hostile strings,
    /// NULLs, nested JSON, and instants around calendar edges.
    static let cases: [(String, String)] = [
        (
            "plain",
            """
            'tenant:0b6f1c2e-8a4d-4c3e-9f1a-2b3c4d5e6f70', 1::bigint, '0b6f1c2e-8a4d-4c3e-9f1a-2b3c4d5e6f70'::uuid,
                '2026-11-23 10:11:12.345678+00'::timestamptz,
            'e40e2742-6899-4dc4-a456-cbaf18f375ad'::uuid, 'backend_manager', 'accounts.lock', 'customer',
                'c-1', 'req-1', '10.0.0.1',
            'Chargeback', '{"status": "active"}'::jsonb, '{"status": "locked", "version": 2}'::jsonb, 'digest',
                NULL::uuid, NULL::uuid
            """
        ),
        (
            "escapes and unicode",
            """
            'platform:03', 9223372036854775807::bigint, '00000000-0000-0000-0000-000000000000'::uuid,
                '2000-01-01 00:00:00+00'::timestamptz,
            NULL::uuid, 'r', 'a', 't',
                E'quote " backslash \\\\ slash / tab \\t nl \\n cr \\r bs \\b ff \\f bell \\x07 esc \\x1b del \\x7f',
            'Zoë — 東京 🏃', NULL, E'line\\none',
                '{"b": [1, 2.50, -3e2, "x\\"y", null, true, {"z": {}}], "a": "é", "aa": []}'::jsonb,
            '"just a string"'::jsonb, '', 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid,
                '5e55e55e-0000-4000-8000-000000000001'::uuid
            """
        ),
        (
            "before 2000 and a leap day",
            """
            'c', 0::bigint, '11111111-2222-3333-4444-555555555555'::uuid, '1999-12-31 23:59:59.999999+00'::timestamptz,
                NULL::uuid, '', '', '', '', '', '',
            '', NULL::jsonb, '12.5000'::jsonb, 'd', NULL::uuid, NULL::uuid
            """
        ),
        (
            "leap day",
            """
            'c', 2::bigint, '11111111-2222-3333-4444-555555555555'::uuid, '2024-02-29 12:00:00.000001+00'::timestamptz,
                NULL::uuid, 'x', 'y', 'z', 'w',
            'v', NULL, NULL, '[]'::jsonb, '{}'::jsonb, 'd', '11111111-2222-3333-4444-555555555555'::uuid, NULL::uuid
            """
        ),
        (
            "far dates",
            """
            'c', 3::bigint, '11111111-2222-3333-4444-555555555555'::uuid, '0001-01-01 00:00:00+00'::timestamptz,
                NULL::uuid, 'x', 'y', 'z', 'w', 'v', NULL, NULL,
            NULL::jsonb, NULL::jsonb, 'd', NULL::uuid, NULL::uuid
            """
        ),
        (
            "end of the calendar",
            """
            'c', 4::bigint, '11111111-2222-3333-4444-555555555555'::uuid, '9999-12-31 23:59:59.999999+00'::timestamptz,
                NULL::uuid, 'x', 'y', 'z', 'w', 'v',
            NULL, NULL, NULL::jsonb, NULL::jsonb, 'd', NULL::uuid, NULL::uuid
            """
        ),
    ]

    static let names =
        """
        chain, seq, tenant_id, occurred_at, actor_id, actor_role, action, target_type, target_id, request_id, \
        source_ip, reason, before, after, policy_digest, token_id, session_id
        """

    /// Builds from cells as they come from PostgresNIO.
    func build(_ canonical: inout AuditCanonical, _ cells: [ByteBuffer?]) -> Bool {
        let copies = cells.map { $0.map { Array($0.readableBytesView) } }
        func withPointers(_ index: Int, _ pointers: [UnsafeRawBufferPointer?]) -> Bool {
            guard index < copies.count else { return canonical.build(pointers) }
            guard let bytes = copies[index] else { return withPointers(index + 1, pointers + [nil]) }
            return bytes.withUnsafeBytes { withPointers(index + 1, pointers + [$0]) }
        }
        return withPointers(0, [])
    }

    /// Swift's bytes and PostgreSQL's for the rows `from` yields (columns named as `audit_events`').
    func compare(_ env: TestEnvironment, from: String) async throws -> [(swift: String, postgres: String)] {
        try await env.owner.withConnection(logger: testLogger) { connection in
            let sql = "SELECT audit_canonical(\(Self.names)), \(AuditCanonical.selectList) FROM \(from)"
            var canonical = AuditCanonical()
            var results: [(String, String)] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) {
                let cells = Array(row.map(\.bytes))
                let built = build(&canonical, Array(cells.dropFirst()))
                #expect(built)
                results.append(
                    (String(decoding: canonical.bytes, as: UTF8.self), String(buffer: cells[0] ?? ByteBuffer())))
            }
            return results
        }
    }

    @Test("hostile strings, NULLs, nested JSON and calendar edges", arguments: cases)
    func matches(label: String, values: String) async throws {
        try await TestEnvironment.with { env in
            let results = try await compare(env, from: "(VALUES (\(values))) AS e(\(Self.names))")
            #expect(results.count == 1)
            for result in results { #expect(result.swift == result.postgres, "\(label)") }
        }
    }

    @Test("every microsecond offset of random instants from 1900 to 2400 formats as to_char does")
    func instants() async throws {
        try await TestEnvironment.with { env in
            let from = """
                (SELECT 'c' AS chain, i::bigint AS seq, gen_random_uuid() AS tenant_id,
                        timestamptz '1900-01-01 00:00:00+00' + floor(random() * 500 * 365.25) * interval '1 day'
                          + floor(random() * 86400e6) * interval '1 microsecond' AS occurred_at,
                        NULL::uuid AS actor_id, 'r' AS actor_role, 'a' AS action, 't' AS target_type, 'x' AS target_id,
                        'q' AS request_id, NULL::text AS source_ip, NULL::text AS reason, NULL::jsonb AS before,
                        jsonb_build_object('i', i, 'f', i / 7.0) AS after, 'd' AS policy_digest, NULL::uuid AS token_id,
                        CASE WHEN i % 2 = 0 THEN gen_random_uuid() END AS session_id
                 FROM generate_series(1, 2000) i) AS e
                """
            let results = try await compare(env, from: from)
            #expect(results.count == 2000)
            #expect(results.filter { $0.swift != $0.postgres }.map(\.postgres).prefix(3) == [])
        }
    }

    @Test("a year the database can store but audit_append never writes is refused, not misformatted")
    func outOfRange() async throws {
        try await TestEnvironment.with { env in
            try await env.owner.withConnection(logger: testLogger) { connection in
                let sql = """
                    SELECT \(AuditCanonical.selectList) FROM (VALUES ('c', 1::bigint, gen_random_uuid(), timestamptz
                        '0044-03-15 12:00:00+00 BC',
                      NULL::uuid, 'r', 'a', 't', 'x', 'q', NULL::text, NULL::text, NULL::jsonb, NULL::jsonb, 'd',
                          NULL::uuid, NULL::uuid)) AS e(\(Self.names))
                    """
                var canonical = AuditCanonical()
                var rows = 0
                for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) {
                    let built = build(&canonical, Array(row.map(\.bytes)))
                    #expect(!built)
                    rows += 1
                }
                #expect(rows == 1)
            }
        }
    }
}
