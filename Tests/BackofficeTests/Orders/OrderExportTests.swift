import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Orders: the export, streamed with the list's filters")
struct OrderExportTests {
    @Test(
        """
        2,100 orders: the shipped 1,050 exported over two pages as CSV and JSON Lines, newest first, each once; \\
        a name a spreadsheet would run as a formula neutralised; another shop exports none of them; a bad filter \\
        is refused before any byte
        """
    )
    func shippedOrders() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let (tenant, customer) = (shop.partner.tenantID.text, shop.customer.id.text)
            try await env.asOwner(
                """
                WITH o AS (
                    INSERT INTO orders (tenant_id, id, customer_id, status, total_cents, total_fitpoints,
                        shipping_name, shipping_address, line_count, created_at, updated_at, carrier, tracking_number)
                    SELECT '\(tenant)', gen_random_uuid(), '\(customer)', CASE WHEN n % 2 = 0 THEN 'shipped' ELSE
                        'paid' END, 1000, 0, CASE WHEN n = 2 THEN '=HYPERLINK("http://evil.example")' ELSE 'Buyer '
                        || n END, '{"line1": "1 Main St", "city": "Austin", "region": "TX", "postal_code": "73301",
                        "country": "US"}', 1, now() - n * interval '1 minute', now(),
                        CASE WHEN n % 2 = 0 THEN 'UPS' END, CASE WHEN n % 2 = 0 THEN '1Z' || n END
                    FROM generate_series(1, 2100) n RETURNING tenant_id, id)
                INSERT INTO order_lines (tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price)
                SELECT tenant_id, id, 1, '\(shop.goods["BOTTLE"]!.text)', 'BOTTLE-0', 'Bottle', 1, 'usd', 1000 FROM o
                """)
            let admin = shop.partner.adminToken
            try await env.withApp { client in
                let csv = try await client.call(.get, "/v1/orders/export?status=shipped&format=csv", token: admin)
                #expect(csv.status == 200)
                let rows = csv.text.split(separator: "\n")
                #expect(rows.first == Substring(OrderFile.columns.joined(separator: ",")))
                #expect(rows.count == 1 + 1_050, "every shipped order once, over two pages")
                #expect(csv.text.contains(#""'=HYPERLINK(""http://evil.example"")""#), "the formula neutralised")
                #expect(!csv.text.contains(",=HYPERLINK") && !csv.text.contains(#","=HYPERLINK"#))

                let jsonl = try await client.call(.get, "/v1/orders/export?status=shipped&format=jsonl", token: admin)
                let lines = try jsonl.text.split(separator: "\n").map {
                    try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                }
                #expect(lines.count == 1_050 && Set(lines.compactMap { $0["id"] as? String }).count == 1_050)
                let placed = lines.compactMap { $0["placed_at"] as? String }
                #expect(placed == placed.sorted(by: >), "newest first")
                #expect(lines.allSatisfy { $0["status"] as? String == "shipped" && $0["customer_id"] == nil })

                let masked = try await client.call(
                    .get, "/v1/orders/export?status=shipped&format=jsonl", token: env.fixture.tokens[.auditor]!)
                #expect(masked.status == 200 && masked.text.contains("B***") && !masked.text.contains("Buyer 4"))
                let other = try await client.call(
                    .get, "/v1/orders/export?format=jsonl", token: env.fixture.partners[1].adminToken)
                #expect(other.status == 200 && other.text.isEmpty, "another shop exports none of them")
                let bad = try await client.call(
                    .get,
                    "/v1/orders/export?placed_from=2026-11-02T00:00:00Z&placed_to=2026-11-01T00:00:00Z",
                    token: admin)
                #expect(bad.status == 422 && bad.text.contains("before_start"), "\(bad.text)")
                let customerFilter = try await client.call(
                    .get, "/v1/orders/export?customer_id=\(customer)", token: admin)
                #expect(customerFilter.status == 403)
            }
        }
    }
}
