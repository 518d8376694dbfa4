import Foundation
import HTTPTypes
import Testing

@testable import Backoffice

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
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let home = try await admin.get("/console/home")
                #expect(home.status == 200)
                let paid =
                    try await env.ownerScalar(
                        "SELECT count(*) FROM orders WHERE tenant_id = '\(alpha)' AND status = 'paid'", as: Int64.self)
                    ?? 0
                #expect(home.text.contains("<span class=\"count\">\(paid)</span> To accept"), "its own paid orders")
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
