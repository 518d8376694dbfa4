import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console home: a shop's orders to handle by state and its goods low in stock")
struct ConsoleHomeTests {
    @Test(
        """
        a partner's home counts its own orders by state and lists its active goods below 5 in stock, not another \
        tenant's
        """
    )
    func shopHome() async throws {
        try await TestEnvironment.with { env in
            let alpha = env.fixture.partners[0].tenantID
            let beta = env.fixture.partners[1].tenantID
            try await env.asOwner(
                """
                INSERT INTO goods (tenant_id, id, sku, name, description, category, price_cents, stock, status,
                    image_urls, created_at, updated_at)
                VALUES ('\(alpha)', gen_random_uuid(), 'LOW-A', 'Almost gone', '', 'snacks', 100, 2, 'active', '{}',
                    now(), now()),
                       ('\(alpha)', gen_random_uuid(), 'LOW-DRAFT', 'Draft low', '', 'snacks', 100, 1, 'draft', '{}',
                           now(), now()),
                       ('\(beta)', gen_random_uuid(), 'LOW-B', 'Other shop low', '', 'snacks', 100, 1, 'active', '{}',
                           now(), now())
                """)
            // Both shops have orders: alpha 3 to accept, 2 to ship, 1 shipped; beta 5, 4 and 0.
            for (tenant, status, count) in [
                (alpha, "paid", 3), (alpha, "accepted", 2), (alpha, "shipped", 1), (beta, "paid", 5),
                (beta, "accepted", 4),
            ] {
                try await env.asOwner(
                    """
                    WITH o AS (
                        INSERT INTO orders (tenant_id, id, customer_id, status, total_cents, total_fitpoints,
                            shipping_name, shipping_address, carrier, tracking_number, line_count, created_at,
                            updated_at)
                        SELECT '\(tenant)', gen_random_uuid(), gen_random_uuid(), '\(status)', 100, 0, 'B', '{}',
                            'UPS', '1Z', 1, now(), now() FROM generate_series(1, \(count))
                        RETURNING tenant_id, id)
                    INSERT INTO order_lines (tenant_id, order_id, line, good_id, sku, name, quantity, paid_in,
                        unit_price)
                    SELECT o.tenant_id, o.id, 1, g.id, g.sku, g.name, 1, 'usd', 100
                    FROM o, LATERAL (SELECT id, sku, name FROM goods WHERE tenant_id = o.tenant_id LIMIT 1) g
                    """)
            }
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let home = try await admin.get("/console/home")
                #expect(home.status == 200)
                for (count, label) in [(3, "To accept"), (2, "To ship"), (1, "Shipped"), (0, "Delivered")] {
                    #expect(
                        home.text.contains("<span class=\"count\">\(count)</span> \(label)</a>"),
                        "its own orders only: \(count) \(label)")
                }
                let other = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[1].admin.operatorID)
                let otherHome = try await other.get("/console/home").text
                #expect(otherHome.contains("<span class=\"count\">5</span> To accept</a>"))
                #expect(otherHome.contains("<span class=\"count\">4</span> To ship</a>"))
                #expect(otherHome.contains("<span class=\"count\">0</span> Shipped</a>"))
                let stock = try #require(home.text.after(last: "id=\"low-stock\""))
                #expect(
                    stock.contains("LOW-A") && !stock.contains("LOW-DRAFT") && !stock.contains("LOW-B"),
                    "its own active goods only")
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                #expect(
                    !(try await manager.get("/console/home").text.contains("Orders to handle")),
                    "a platform role's home has no shop section")
            }
        }
    }
}
