import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Goods: a partner's catalog, If-Match on updates, the app's catalog read")
struct GoodsTests {
    @Test(
        """
        updates need If-Match (428 without, 412 stale); status moves draft → active → archived; only active goods \
        are in the catalog
        """
    )
    func updatesAndCatalog() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/goods", token: partner.staffToken,
                    json:
                        #"""
                        {"sku": "MAT-1", "name": "Cork yoga mat", "category": "mats", "price_cents": 4900,\#
                         "price_fitpoints": 5000, "stock": 7, "image_urls": ["https://cdn.example/mat.jpg"]}
                        """#
                )
                #expect(created.status == 201, "\(created.text)")
                let id = try #require(created["id"])
                #expect(created.headers[.eTag] == "\"1\"")
                let taken = try await client.call(
                    .post, "/v1/goods", token: partner.adminToken,
                    json: #"{"sku": "MAT-1", "name": "Again", "category": "mats", "price_cents": 1, "stock": 1}"#)
                #expect(taken.status == 409)
                #expect(taken["code"] == "sku_taken")

                let noMatch = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"status": "active"}"#)
                #expect(noMatch.status == 428)
                let stale = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"status": "active"}"#,
                    headers: ["If-Match": "\"9\""])
                #expect(stale.status == 412)
                let invalid = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken,
                    json: #"{"stock": -1, "image_urls": ["http://insecure.example/a.jpg"]}"#,
                    headers: ["If-Match": "\"1\""])
                #expect(invalid.status == 422)
                #expect(invalid.text.contains("stock") && invalid.text.contains("image_urls[0]"))
                #expect(
                    try await client.call(.get, "/v1/catalog", token: app).text.contains("MAT-1") == false,
                    "a draft is not in the catalog")

                let active = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"status": "active", "stock": 5}"#,
                    headers: ["If-Match": "\"1\""])
                #expect(active.status == 200, "\(active.text)")
                #expect(active["status"] == "active")
                #expect(active.headers[.eTag] == "\"2\"")
                let catalog = try await client.call(.get, "/v1/catalog?q=yoga", token: app)
                let items = catalog.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1)
                #expect(items.first?["partner_name"] as? String == partner.slug.capitalized)
                #expect(items.first?["in_stock"] as? Bool == true)
                #expect(
                    (try await client.call(.get, "/v1/catalog?category=shoes", token: app).json["items"] as? [Any])?
                        .isEmpty == true)
                #expect(
                    try await client.call(.get, "/v1/catalog?q=%25", token: app).status == 422, "too short a search")

                let archived = try await client.call(.post, "/v1/goods/\(id)/archive", token: partner.adminToken)
                #expect(archived.status == 200)
                #expect(
                    (try await client.call(.get, "/v1/catalog?q=yoga", token: app).json["items"] as? [Any])?.isEmpty
                        == true)
                let afterArchive = try await client.call(
                    .patch, "/v1/goods/\(id)", token: partner.staffToken, json: #"{"stock": 9}"#,
                    headers: ["If-Match": "\"3\""])
                #expect(afterArchive.status == 409)
                #expect(afterArchive["current_state"] == "archived")
                let audited = try await env.ownerScalar(
                    "SELECT string_agg(action, ',' ORDER BY id) FROM audit_events WHERE target_id = '\(id)'",
                    as: String.self)
                #expect(audited == "goods.create,goods.update,goods.archive")
            }
        }
    }

    @Test("a platform role has no shop: creating a good is 422; a manager still reads every partner's goods")
    func platformRoles() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.tokens[.platformAdmin]!
            try await env.withApp { client in
                let refused = try await client.call(
                    .post, "/v1/goods", token: admin,
                    json: #"{"sku": "X", "name": "x", "category": "mats", "price_cents": 1, "stock": 1}"#)
                #expect(refused.status == 422)
                _ = try await client.call(
                    .post, "/v1/goods", token: env.fixture.partners[0].adminToken,
                    json: #"{"sku": "A-1", "name": "A", "category": "mats", "price_cents": 1, "stock": 1}"#)
                _ = try await client.call(
                    .post, "/v1/goods", token: env.fixture.partners[1].adminToken,
                    json: #"{"sku": "B-1", "name": "B", "category": "mats", "price_cents": 1, "stock": 1}"#)
                let all = try await client.call(.get, "/v1/goods", token: env.fixture.tokens[.backendManager]!)
                #expect(
                    (all.json["items"] as? [[String: Any]] ?? []).compactMap { $0["sku"] as? String } == ["A-1", "B-1"])
            }
        }
    }
}
