import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console orders board: the API's moves, confirmed when destructive, the order's audit trail")
struct ConsoleOrdersTests {
    /// A paid order of the fixture's first partner (a card payment, authorized).
    func paidOrder(_ shop: ShopFixture) async throws -> UUID {
        try await shop.env.database.runStaged(
            Checkout(shop.request([("BOTTLE", 1, .usd)]), payments: SimulatedPaymentGateway(), idempotencyKey: nil),
            context: shop.env.context(.appService)
        ).detail.order.id
    }

    @Test(
        """
        a partner admin accepts and ships a paid order from the board (its customer's name escaped; a ship \
        without tracking is refused next to the field); the card is captured; the order's page shows its trail, \
        via console
        """
    )
    func acceptAndShip() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let id = try await paidOrder(shop)
            try await env.withApp { client in
                let browser = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let hostile = "<img src=x onerror=alert(1)> & 'Ann'"
                try await env.asOwner("UPDATE orders SET shipping_name = $$\(hostile)$$ WHERE id = '\(id)'")
                let board = try await browser.get("/console/orders")
                #expect(board.status == 200)
                #expect(board.text.contains("/console/orders/\(id.text)"), "a paid order is on the board, to accept")
                #expect(
                    board.text.contains("<td>&lt;img src=x onerror=alert(1)&gt; &amp; &#39;Ann&#39;</td>")
                        && !board.text.contains(hostile))
                let page = try await browser.get("/console/orders/\(id.text)")
                let csrf = try #require(page.csrf)
                #expect(page.text.contains("Accept order") && !page.text.contains("Refund order"))
                let accepted = try await browser.post("/console/orders/\(id.text)/accept", [:], csrf: csrf)
                #expect(accepted.status == 303)
                let refused = try await browser.post(
                    "/console/orders/\(id.text)/ship", ["carrier": "UPS", "tracking_number": ""], csrf: csrf)
                #expect(refused.status == 422)
                #expect(refused.text.contains("id=\"tracking_number-error\""))
                #expect(refused.text.contains("value=\"UPS\""), "the input is kept")
                let shipped = try await browser.post(
                    "/console/orders/\(id.text)/ship", ["carrier": "UPS", "tracking_number": "1Z999"], csrf: csrf)
                #expect(shipped.status == 303)
                let status = try await env.ownerScalar("SELECT status FROM orders WHERE id = '\(id)'", as: String.self)
                #expect(status == "shipped")
                let payment = try await env.ownerScalar(
                    "SELECT status FROM payments WHERE order_id = '\(id)'", as: String.self)
                #expect(payment == "captured")
                let after = try await browser.get("/console/orders/\(id.text)")
                #expect(after.text.contains("Audit trail"))
                for action in ["orders.accept", "orders.ship"] {
                    #expect(after.text.contains("<code>\(action)</code>"))
                }
                #expect(after.text.contains("<td>console</td>"))
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(DISTINCT action) FILTER (WHERE session_id IS NOT NULL) - count(*) FILTER (WHERE \
                    session_id IS NULL) FROM audit_events WHERE target_id = '\(id.text)' AND action IN \
                    ('orders.accept', 'orders.ship')
                    """,
                    as: Int64.self)
                #expect(viaConsole == 2, "both moves' events (ship's reservation and record) carry the session")
            }
        }
    }

    @Test(
        """
        accepting an order that is not paid is refused on its page (422) in the request's one transaction: \
        the move undone to its savepoint, nothing written
        """
    )
    func refusedAccept() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            var request = shop.request([("BOTTLE", 1, .usd)])
            request.paymentMethod = SimulatedPaymentGateway.pendingCard
            let id = try await env.database.runStaged(
                Checkout(request, payments: SimulatedPaymentGateway(), idempotencyKey: nil),
                context: env.context(.appService)
            ).detail.order.id
            let before = try await env.ownerScalar("SELECT version FROM orders WHERE id = '\(id)'", as: Int64.self)
            try await env.withApp { client in
                let browser = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let csrf = try #require(try await browser.get("/console/orders/\(id.text)").csrf)
                let refused = try await browser.post("/console/orders/\(id.text)/accept", [:], csrf: csrf)
                #expect(refused.status == 422)
                #expect(refused.text.contains("Only an order that is paid can become accepted."))
                #expect(refused.text.contains("It is pending_payment now"))
            }
            let order = try await env.ownerScalar(
                "SELECT status || ' ' || version FROM orders WHERE id = '\(id)'", as: String.self)
            #expect(order == "pending_payment \(before ?? -1)")
            let accepts = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_id = '\(id.text)' AND action = 'orders.accept'",
                as: Int64.self)
            #expect(accepts == 0)
        }
    }

    @Test(
        """
        cancelling needs its confirmation (422, nothing changed without it); a partner's staff is not offered a \
        refund and is refused one (403)
        """
    )
    func confirmAndPolicy() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let id = try await paidOrder(shop)
            let staffID = try await env.ownerScalar(
                "SELECT id FROM operators WHERE tenant_id = '\(shop.partner.tenantID)' AND role = 'partner_staff'",
                as: UUID.self)
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let csrf = try #require(try await admin.get("/console/orders/\(id.text)").csrf)
                let unconfirmed = try await admin.post(
                    "/console/orders/\(id.text)/cancel", ["reason": "Out of stock"], csrf: csrf)
                #expect(unconfirmed.status == 422)
                #expect(unconfirmed.text.contains("id=\"confirm_cancel-error\""))
                #expect(
                    try await env.ownerScalar("SELECT status FROM orders WHERE id = '\(id)'", as: String.self) == "paid"
                )
                let confirmed = try await admin.post(
                    "/console/orders/\(id.text)/cancel", ["reason": "Out of stock", "confirm": "yes"], csrf: csrf)
                #expect(confirmed.status == 303)
                #expect(
                    try await env.ownerScalar("SELECT status FROM orders WHERE id = '\(id)'", as: String.self)
                        == "cancelled")

                // Another order, accepted and shipped through the use cases (a refund needs a captured payment).
                let shipped = try await paidOrder(shop)
                let context = OperationContext(
                    principal: shop.partner.admin, requestID: "t", sourceIP: nil, policies: env.policies)
                _ = try await env.database.run(AdvanceOrder(orderID: shipped, move: .accept), context: context)
                _ = try await env.database.runStaged(
                    ShipOrder(
                        orderID: shipped, carrier: "UPS", trackingNumber: "1Z", payments: SimulatedPaymentGateway()),
                    context: context)
                let staff = try await ConsoleClient.signedIn(env, client, as: staffID)
                let page = try await staff.get("/console/orders/\(shipped.text)")
                #expect(page.status == 200)
                #expect(!page.text.contains("Refund order"), "staff may not refund: not offered")
                let staffCSRF = try #require(page.csrf)  // the 403 below is the policy's, not a missing CSRF token's
                let refused = try await staff.post(
                    "/console/orders/\(shipped.text)/refund", ["reason": "x", "confirm": "yes"], csrf: staffCSRF)
                #expect(refused.status == 403)
                #expect(
                    try await env.ownerScalar("SELECT status FROM orders WHERE id = '\(shipped)'", as: String.self)
                        == "shipped")
            }
        }
    }

    @Test(
        """
        a partner admin refunds one line of a shipped order from its page, confirmed, as a return: the card \
        refunded for that line, its unit back in stock, the refund listed; an unconfirmed or unreadable form \
        changes nothing
        """
    )
    func refundOneLine() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let id = try await env.database.runStaged(
                Checkout(
                    shop.request([("BOTTLE", 2, .usd), ("MAT", 1, .usd)]), payments: SimulatedPaymentGateway(),
                    idempotencyKey: nil),
                context: env.context(.appService)
            ).detail.order.id
            let context = OperationContext(
                principal: shop.partner.admin, requestID: "t", sourceIP: nil, policies: env.policies)
            _ = try await env.database.run(AdvanceOrder(orderID: id, move: .accept), context: context)
            _ = try await env.database.runStaged(
                ShipOrder(orderID: id, carrier: "UPS", trackingNumber: "1Z", payments: SimulatedPaymentGateway()),
                context: context)
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let page = try await admin.get("/console/orders/\(id.text)")
                #expect(page.text.contains("Refund part") && page.text.contains("name=\"units_1\""))
                let csrf = try #require(page.csrf)
                let form = ["units_1": "1", "restock": "yes", "reason": "One bottle dented"]
                let unconfirmed = try await admin.post("/console/orders/\(id.text)/refunds", form, csrf: csrf)
                #expect(unconfirmed.status == 422 && unconfirmed.text.contains("id=\"confirm_refund_part-error\""))
                var bad = form
                (bad["units_1"], bad["confirm_refund_part"]) = ("one", "yes")
                #expect(try await admin.post("/console/orders/\(id.text)/refunds", bad, csrf: csrf).status == 422)
                #expect(try await shop.stock("BOTTLE") == 8, "nothing refunded yet")
                let confirmed = try await admin.post(
                    "/console/orders/\(id.text)/refunds", form.merging(["confirm_refund_part": "yes"]) { $1 },
                    csrf: csrf)
                #expect(confirmed.status == 303, "\(confirmed.text)")
                #expect(try await shop.stock("BOTTLE") == 9)
                let refunded = try await env.ownerScalar(
                    "SELECT refunded_cents FROM payments WHERE order_id = '\(id)'", as: Int64.self)
                #expect(refunded == 2_500)
                let after = try await admin.get("/console/orders/\(id.text)")
                #expect(after.text.contains("id=\"refunds\"") && after.text.contains("#1 × 1 (returned to stock)"))
                #expect(after.text.contains("of 1 left"), "one bottle is left to refund")
            }
        }
    }

    @Test(
        """
        the board's bulk: paid orders ticked and checked first (a dry run: nothing changed, the page offers the \
        move), then accepted; shipping them needs each order's tracking number; none ticked is refused
        """
    )
    func bulkFromTheBoard() async throws {
        try await TestEnvironment.with { env in
            let shop = try await ShopFixture.make(env)
            let ids = try await BulkOrderMovesTests.paidOrders(shop, count: 3)
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: shop.partner.admin.operatorID)
                let board = try await admin.get("/console/orders?status=paid")
                #expect(board.text.contains("name=\"order_\(ids[0].text)\""))
                let csrf = try #require(board.csrf)
                var form = ["move": "accept", "dry_run": "yes"]
                for id in ids { form["order_\(id.text)"] = "yes" }
                let checked = try await admin.post("/console/orders/bulk", form, csrf: csrf)
                #expect(checked.status == 200 && checked.text.contains("3 would accept, 0 refused."), "\(checked.text)")
                #expect(checked.text.contains("id=\"bulk-confirm\""), "the dry run offers the move")
                #expect(try await env.auditCount("orders.accept") == 0)
                form["dry_run"] = "no"
                let accepted = try await admin.post("/console/orders/bulk", form, csrf: csrf)
                #expect(accepted.text.contains("3 done, 0 refused."), "\(accepted.text)")
                #expect(try await env.auditCount("orders.accept") == 3)

                let toShip = try await admin.get("/console/orders?status=accepted")
                #expect(toShip.text.contains("name=\"tracking_\(ids[0].text)\""))
                var ship = ["move": "ship", "dry_run": "no", "carrier": "UPS"]
                for (index, id) in ids.enumerated() {
                    ship["order_\(id.text)"] = "yes"
                    ship["tracking_\(id.text)"] = index == 0 ? "" : "1Z\(index)"
                }
                let shipped = try await admin.post("/console/orders/bulk", ship, csrf: csrf)
                #expect(shipped.text.contains("2 done, 1 refused."), "\(shipped.text)")
                let none = try await admin.post("/console/orders/bulk", ["move": "ship"], csrf: csrf)
                #expect(none.status == 422 && none.text.contains("1 to 500 orders"), "\(none.text)")
            }
        }
    }
}
