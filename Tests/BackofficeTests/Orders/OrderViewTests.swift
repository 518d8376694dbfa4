import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Orders: each operator's saved views of the board")
struct OrderViewTests {
    @Test(
        """
        a view saved by the API opens the board so; 30 saves of one name at once keep one; names are unique \\
        whatever their case; another operator neither lists nor deletes it; a bad filter is 422
        """
    )
    func savedViews() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let (admin, staff) = (partner.adminToken, partner.staffToken)
            try await env.withApp { client in
                let body = #"{"name": "Shipped mats", "status": "shipped", "sku": "MAT-1", "total_min_cents": 1250}"#
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<30 {
                        group.addTask {
                            try await client.call(.post, "/v1/order-views", token: admin, json: body).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 201 }.count == 1 && statuses.filter { $0 == 409 }.count == 29)
                let shouted = try await client.call(
                    .post, "/v1/order-views", token: admin, json: #"{"name": "SHIPPED MATS"}"#)
                #expect(shouted.status == 409 && shouted["code"] == "view_name_taken")
                let bad = try await client.call(
                    .post, "/v1/order-views", token: admin,
                    json: #"{"name": "x", "placed_from": "2026-11-02T00:00:00Z", "placed_to": "2026-11-01T00:00:00Z"}"#)
                #expect(bad.status == 422)
                let mine = try await client.call(.get, "/v1/order-views", token: admin)
                let items = try #require(mine.json["items"] as? [[String: Any]])
                #expect(items.count == 1 && items.first?["sku"] as? String == "MAT-1")
                let id = try #require(items.first?["id"] as? String)
                let theirs = try await client.call(.get, "/v1/order-views", token: staff)
                #expect((theirs.json["items"] as? [Any])?.isEmpty == true, "another operator sees none")
                #expect(try await client.call(.delete, "/v1/order-views/\(id)", token: staff).status == 404)
                let view = try await env.database.read(
                    ListSavedOrderViews(),
                    context: OperationContext(
                        principal: partner.admin, requestID: "t", sourceIP: nil, policies: env.policies)
                ).first
                #expect(
                    view.map(OrderBoard.link)
                        == "/console/orders?min_usd=12.50&sku=MAT-1&status=shipped", "the board's own form")
                #expect(try await client.call(.delete, "/v1/order-views/\(id)", token: admin).status == 200)
                #expect(try await env.auditCount("order_views.create") == 1)
                #expect(try await env.auditCount("order_views.delete") == 1)
            }
        }
    }

    @Test("a partner admin saves the filtered board as a view from the console, opens it, and deletes it")
    func fromTheConsole() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: partner.admin.operatorID)
                let board = try await admin.get("/console/orders?status=shipped&from=2026-11-01&to=2026-11-30")
                let csrf = try #require(board.csrf)
                #expect(board.text.contains("id=\"save-view\""))
                let saved = try await admin.post(
                    "/console/orders/views",
                    ["name": "November's shipped", "status": "shipped", "from": "2026-11-01", "to": "2026-11-30"],
                    csrf: csrf)
                #expect(saved.status == 303)
                let link = "/console/orders?from=2026-11-01&amp;status=shipped&amp;to=2026-11-30"
                let after = try await admin.get("/console/orders")
                #expect(after.text.contains("November&#39;s shipped") && after.text.contains(link), "\(after.text)")
                let unnamed = try await admin.post("/console/orders/views", ["name": " "], csrf: csrf)
                #expect(unnamed.status == 303, "back to the board, saying why")
                let id = try #require(
                    try await env.ownerScalar("SELECT id FROM order_views", as: UUID.self))
                let deleted = try await admin.post("/console/orders/views/\(id.text)/delete", [:], csrf: csrf)
                #expect(deleted.status == 303)
                #expect(try await env.ownerScalar("SELECT count(*) FROM order_views", as: Int.self) == 0)
            }
        }
    }
}
