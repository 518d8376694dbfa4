import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension GoodsImportTests {
    @Test("export streams every good of the tenant by sku, page after page, in the format import reads back")
    func exportRoundTrip() async throws {
        try await TestEnvironment.with { env in
            let (a, b) = (env.fixture.partners[0], env.fixture.partners[1])
            try await env.withApp { client in
                var csv = "sku,name,description,category,price_cents,stock\n"
                for index in 0..<1_200 {
                    csv +=
                        "G-\(String(format: "%05d", index)),Good \(index),\"Has, a comma\",gear,"
                        + "\(100 + index),\(index % 7)\n"
                }
                #expect(try await importFile(client, a.adminToken, csv).json["created"] as? Int == 1_200)
                #expect(1_200 > ExportGoods.pageSize, "the export crosses a page")
                // The list pages by (sku, id): every good once, in order.
                var skus: [String] = []
                var cursor: String?
                repeat {
                    let page = try await client.call(
                        .get, "/v1/goods?limit=500" + (cursor.map { "&cursor=\($0)" } ?? ""), token: a.staffToken)
                    skus += (page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["sku"] as? String }
                    cursor = page["next_cursor"]
                } while cursor != nil
                #expect(skus.count == 1_200, "\(skus.count) \(skus.prefix(3)) \(skus.suffix(3))")
                #expect(skus == skus.sorted() && Set(skus).count == 1_200)
                let exported = try await client.call(.get, "/v1/goods/export?format=csv", token: a.staffToken)
                #expect(exported.status == 200)
                #expect(exported.headers[.contentType]?.hasPrefix("text/csv") == true)
                let lines = exported.text.split(separator: "\n")
                #expect(lines.count == 1_201)
                #expect(lines[1].hasPrefix("G-00000,Good 0,\"Has, a comma\",gear,100,,0,draft,"))
                #expect(lines.last?.hasPrefix("G-01199,") == true)
                // What export writes, import reads: into the other partner, as a dry run, without an error.
                let readBack = try await importFile(client, b.adminToken, exported.text, query: "?dry_run=true")
                #expect(readBack.json["created"] as? Int == 1_200)
                #expect(readBack.json["rejected"] as? Int == 0)
                let jsonl = try await client.call(.get, "/v1/goods/export?format=jsonl", token: a.adminToken)
                #expect(jsonl.text.split(separator: "\n").count == 1_200)
                // With the list's filters: a category none has, then theirs across the page boundary.
                let none = try await client.call(.get, "/v1/goods/export?category=food", token: a.adminToken)
                #expect(none.status == 200 && none.text.split(separator: "\n").count == 1, "a header only")
                let gear = try await client.call(
                    .get, "/v1/goods/export?format=jsonl&category=gear&status=draft", token: a.adminToken)
                #expect(gear.text.split(separator: "\n").count == 1_200, "\(gear.text.prefix(200))")
                #expect(
                    try await client.call(.get, "/v1/goods/export", token: b.adminToken).text.split(separator: "\n")
                        .count == 1,
                    "B's own: a header only")
            }
        }
    }

    @Test(
        """
        a spreadsheet formula in a good's text is exported neutralised (as the CLI writes CSV), and imports back \
        as it was
        """
    )
    func exportNeutralisesFormulas() async throws {
        try await TestEnvironment.with { env in
            let (a, b) = (env.fixture.partners[0], env.fixture.partners[1])
            try await env.withApp { client in
                let csv =
                    """
                    sku,name,description,category,price_cents,stock\nF-1,=1+2,@SUM(A1),gear,100,3\nF-2,-2+3,+1 \
                    for fun,gear,200,1\n
                    """
                let imported = try await importFile(client, a.adminToken, csv)
                #expect(imported.json["created"] as? Int == 2, "\(imported.text)")
                let exported = try await client.call(.get, "/v1/goods/export?format=csv", token: a.staffToken).text
                #expect(
                    exported.split(separator: "\n").dropFirst() == [
                        "F-1,'=1+2,'@SUM(A1),gear,100,,3,draft,", "F-2,'-2+3,'+1 for fun,gear,200,,1,draft,",
                    ])
                #expect(try await importFile(client, b.adminToken, exported).json["created"] as? Int == 2)
                let readBack = try await client.call(.get, "/v1/goods", token: b.adminToken)
                let goods = try #require(readBack.json["items"] as? [[String: Any]])
                #expect(goods.map { $0["name"] as? String } == ["=1+2", "-2+3"])
                #expect(goods.map { $0["description"] as? String } == ["@SUM(A1)", "+1 for fun"])
            }
        }
    }

    @Test(
        """
        export has back-pressure and checks its token as it goes: a reader that stops holds the server at a few \
        pages, and a token revoked meanwhile ends the export short
        """
    )
    func exportFollowsItsReader() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let goods = 30_000  // 1 KB each: 30 MB, far more than the sockets' buffers hold
            try await env.asOwner(
                """
                INSERT INTO goods (tenant_id, id, sku, name, description, category, price_cents, stock, status,
                    created_at, updated_at)
                SELECT '\(partner.tenantID)', gen_random_uuid(), 'S-' || lpad(g::text, 6, '0'), 'Good ' || g,
                    repeat('d', 1000), 'gear', 100, 1,
                    'active', now(), now()
                FROM generate_series(1, \(goods)) AS g
                """)
            try await env.withApp(trustedProxies: []) { client in
                let port = try #require(client.port)
                let reader = try SocketReader(port: port)
                try reader.send(
                    """
                    GET /v1/goods/export HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \
                    \(partner.staffToken)\r\n\r\n
                    """
                )
                let head = try await offThePool { try reader.read(atLeast: 64 << 10) }
                #expect(head.starts(with: Array("HTTP/1.1 200".utf8)))
                // The reader stops; its token is revoked; then it reads on to the end.
                try await env.asOwner(
                    "UPDATE tokens SET revoked_at = now() WHERE secret_hash = sha256('\(partner.staffToken)'::bytea)")
                let answer = head + (try await offThePool { try reader.readToEnd() })
                let rows = answer.split(separator: UInt8(ascii: "\n")).filter { $0.starts(with: Array("S-".utf8)) }
                    .count
                #expect(
                    rows > 0 && rows < goods,
                    "the pages read before the revocation arrive, the rest never: \(rows) of \(goods) rows")
                #expect(
                    !answer.suffix(5).elementsEqual(Array("0\r\n\r\n".utf8)),
                    "the answer is cut short: no closing chunk")
            }
        }
    }
}
