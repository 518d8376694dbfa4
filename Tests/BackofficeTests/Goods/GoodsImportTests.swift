import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Goods import and export: CSV and JSON Lines, errors by line, all or nothing, dry run, streamed export")
struct GoodsImportTests {
    func importFile(
        _ client: any TestClientProtocol, _ token: String, _ text: String, type: String = "text/csv", query: String = ""
    ) async throws -> Reply {
        try await client.send(
            .post, "/v1/goods/import\(query)", token: token, bytes: Array(text.utf8), headers: ["Content-Type": type])
    }

    static let csv = """
        \u{FEFF}sku,name,description,category,price_cents,price_fitpoints,stock,status,image_urls
        TEE-1,Running tee,"Light, breathable",apparel,2500,,40,active,https://cdn.example/tee.jpg \
        https://cdn.example/tee-back.jpg
        TEE-2,Long-sleeve tee,"Two lines:
        warm and soft",apparel,3200,3500,12,,
        BAD-1,No price,,apparel,,,5,,
        TEE-1,Repeated sku,,apparel,100,,1,,
        CAP-1,Cap,,headwear,1500,,x,,
        CAP-2,Cap,,headwear,1500,,3,retired,http://insecure.example/cap.jpg

        SOCK-1,Socks,,apparel,,900,100,draft,
        """

    @Test(
        "a CSV with a BOM, quoted commas and line breaks: good rows imported, bad rows listed by the line they start on"
    )
    func csvImport() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let reply = try await importFile(client, partner.staffToken, Self.csv)
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["created"] as? Int == 3)
                #expect(reply.json["rejected"] as? Int == 4)
                let errors = (reply.json["errors"] as? [[String: Any]] ?? []).map {
                    "\($0["line"] ?? "?") \($0["field"] ?? "?") \($0["code"] ?? "?")"
                }
                #expect(
                    errors == [
                        "5 price_cents price_required", "6 sku duplicate_sku", "7 stock not_a_whole_number",
                        "8 status unknown_status",
                        "8 image_urls[0] not_https",
                    ], "\(errors)")
                let tee = try #require(
                    (try await client.call(.get, "/v1/goods?limit=10", token: partner.staffToken).json["items"]
                        as? [[String: Any]])?.first {
                            $0["sku"] as? String == "TEE-1"
                        })
                #expect(
                    tee["image_urls"] as? [String] == [
                        "https://cdn.example/tee.jpg", "https://cdn.example/tee-back.jpg",
                    ])
                #expect(tee["description"] as? String == "Light, breathable")
                #expect(tee["status"] as? String == "active")
                #expect(
                    try await env.ownerScalar("SELECT description FROM goods WHERE sku = 'TEE-2'", as: String.self)
                        == "Two lines:\nwarm and soft")
                #expect(
                    try await env.ownerScalar("SELECT status FROM goods WHERE sku = 'SOCK-1'", as: String.self)
                        == "draft")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'goods.import'", as: Int.self) == 1,
                    "one audit event for the import")

                // Again with a new price: updates by sku, status kept where the file gives none.
                let again = try await importFile(
                    client, partner.staffToken,
                    "sku,name,category,price_cents,stock\nTEE-1,Running tee,apparel,2300,38\nNEW-1,New,apparel,100,1\n")
                #expect(again.json["updated"] as? Int == 1)
                #expect(again.json["created"] as? Int == 1)
                #expect(
                    try await env.ownerScalar("SELECT price_cents FROM goods WHERE sku = 'TEE-1'", as: Int64.self)
                        == 2300)
                #expect(
                    try await env.ownerScalar("SELECT status FROM goods WHERE sku = 'TEE-1'", as: String.self)
                        == "active")
                #expect(try await env.ownerScalar("SELECT version FROM goods WHERE sku = 'TEE-1'", as: Int64.self) == 2)
            }
        }
    }

    @Test(
        """
        all or nothing: one bad row refuses the file (422, errors by line) and changes nothing; a dry run reports \
        and changes nothing
        """
    )
    func allOrNothingAndDryRun() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let count = { try await env.ownerScalar("SELECT count(*) FROM goods", as: Int.self) ?? -1 }
                let audit = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) ?? -1 }
                let (goods, events) = (try await count(), try await audit())
                let refused = try await importFile(client, partner.adminToken, Self.csv, query: "?all_or_nothing=true")
                #expect(refused.status == 422)
                #expect(refused["code"] == "import_rejected")
                #expect(refused.text.contains("line 5: price_cents"))
                let dry = try await importFile(client, partner.adminToken, Self.csv, query: "?dry_run=true")
                #expect(dry.status == 200)
                #expect(dry.json["dry_run"] as? Bool == true)
                #expect(dry.json["created"] as? Int == 3)
                #expect(try await count() == goods)
                #expect(try await audit() == events)
                let malformed = try await importFile(client, partner.adminToken, "sku,name,colour\nA,B,red\n")
                #expect(malformed.status == 422)
                #expect(malformed["code"] == "malformed_file")
                let platform = try await importFile(
                    client, env.fixture.tokens[.platformAdmin]!, "sku,name,category,price_cents,stock\nA,B,cat,1,1\n")
                #expect(platform.status == 422, "a platform role has no shop")
                #expect(try await count() == goods)
            }
        }
    }

    @Test("JSON Lines: typed values; unknown keys and wrong types are row errors")
    func jsonLinesImport() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let lines = """
                    {"sku": "J-1", "name": "Jump rope", "category": "gear", "price_cents": 1200, "stock": 9, \
                    "image_urls": ["https://cdn.example/rope.jpg"]}

                    {"sku": "J-2", "name": "Kettlebell", "category": "gear", "price_cents": "cheap", "stock": 2}
                    {"sku": "J-3", "name": "Mat", "category": "gear", "price_fitpoints": 800, "stock": 1, \
                    "colour": "blue"}
                    not json
                    """
                let reply = try await importFile(client, partner.adminToken, lines, type: "application/x-ndjson")
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["created"] as? Int == 1)
                let errors = (reply.json["errors"] as? [[String: Any]] ?? []).map {
                    "\($0["line"] ?? "?") \($0["code"] ?? "?")"
                }
                #expect(errors == ["3 invalid_type", "4 unknown_field", "5 invalid_json"], "\(errors)")
            }
        }
    }

    @Test(
        """
        the import reads its body as it arrives: a chunked upload over the limit is 413 and a NUL byte 422, \
        neither importing anything
        """
    )
    func streamedUploadLimits() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            // 64 KiB: the limit, not its size, is under test
            try await env.withApp(trustedProxies: [], maxBulkBodySize: 64 << 10) { client in
                let port = try #require(client.port)
                func upload(_ chunks: [[UInt8]]) async throws -> String {
                    var request = Array(
                        """
                        POST /v1/goods/import HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \
                        \(partner.adminToken)\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n
                        """
                        .utf8)
                    for chunk in chunks {
                        request += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
                    }
                    let whole = request + Array("0\r\n\r\n".utf8)
                    return try await offThePool { try rawHTTP(port: port, whole) }
                }
                let line = Array("OVER-1,Big,,gear,100,1\n".utf8)
                let limit = Array([[UInt8]](repeating: line, count: (64 << 10) / line.count).joined())
                let over = try await upload(
                    [Array("sku,name,description,category,price_cents,stock\n".utf8)]
                        + Array(repeating: limit, count: 2))
                #expect(over.hasPrefix("HTTP/1.1 413") && over.contains("payload_too_large"), "\(over.prefix(300))")
                let nul = try await upload([
                    Array("sku,name,description,category,price_cents,stock\nNUL-1,A\u{0}B,,gear,100,1\n".utf8)
                ])
                #expect(nul.hasPrefix("HTTP/1.1 422") && nul.contains("invalid_character"), "\(nul.prefix(300))")
                #expect(try await env.ownerScalar("SELECT count(*) FROM goods", as: Int.self) == 0)
            }
        }
    }

    @Test(
        """
        a token revoked while its import uploads changes nothing: the import's transaction authenticates it again \
        (401)
        """
    )
    func importRevokedDuringUpload() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp(trustedProxies: []) { client in
                let port = try #require(client.port)
                let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let uploader = try SocketReader(port: port)
                let first = "sku,name,description,category,price_cents,stock\nUP-1,One,,gear,100,1\n"
                try uploader.send(
                    """
                    POST /v1/goods/import HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \
                    \(partner.adminToken)\r\n
                    """
                        + """
                        Content-Type: text/csv\r\nTransfer-Encoding: \
                        chunked\r\n\r\n\(String(first.utf8.count, radix: 16))\r\n\(first)\r\n
                        """
                )
                try await env.asOwner(
                    "UPDATE tokens SET revoked_at = now() WHERE secret_hash = sha256('\(partner.adminToken)'::bytea)")
                let rest = "UP-2,Two,,gear,100,1\n"
                try uploader.send("\(String(rest.utf8.count, radix: 16))\r\n\(rest)\r\n0\r\n\r\n")
                let answer = String(decoding: try await offThePool { try uploader.read(atLeast: 12) }, as: UTF8.self)
                #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer.prefix(200))")
                #expect(try await env.ownerScalar("SELECT count(*) FROM goods", as: Int.self) == 0)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events,
                    "nothing audited")
            }
        }
    }
}
