import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// A shop's orders: the board by state (cursor paging), an order's page (lines, payment,
    /// shipping, its audit trail) and its moves — accept, ship with a tracking number, deliver,
    /// and the confirmed cancel and refund — each the API's use case with its policy and audit.
    /// Accept and deliver run in the request's one transaction, as the accounts pages' moves do:
    /// the session's check, the change (in a savepoint), its audit event and the page shown on a
    /// refusal. Ship, cancel and refund call the payment provider: they run as staged operations,
    /// in a request that holds no transaction, with none held while the provider answers
    /// (`payments`, the API's).
    func registerOrders(on group: RouterGroup<AppRequestContext>, payments: any PaymentGateway) {
        section("orders", "Orders", needs: ListOrders.action, on: group) { console in
            let day = try console.form.text("day").map { try ReportRange.day($0, field: "day") }
            // A day's orders open on every state; the board alone on the orders to accept.
            let status =
                day != nil && console.form.text("status") == nil
                ? nil : try OrderBoard.status(console.form.text("status"))
            let (filter, kept) = try OrderBoard.filter(console.form)
            let page = try await OrderListRequest(
                limit: Self.pageSize, cursor: console.form.text("cursor"), status: status?.rawValue, day: day,
                filter: filter
            )
            .run(database, context: console.context)
            let query = { (status: Order.Status?) in
                ["status": status?.rawValue, "day": day?.description].merging(kept.mapValues(Optional.some)) { $1 }
            }
            let tabs = (day == nil ? [] : [nil]) + OrderBoard.tabs.map(Optional.some)
            let state = status.map(OrderBoard.label) ?? "Every state"
            let bulk = status.flatMap(OrderBoard.bulkMove).flatMap {
                console.may(BulkOrderMoves.action) && console.may($0.action) ? $0 : nil
            }
            var data: [String: Any] = [
                "rowsHTML": OrderBoard.rows(page.items, bulk: bulk), "hasOrders": !page.items.isEmpty,
                "tabsHTML": ConsoleNavigation.links(
                    tabs.map {
                        .link(
                            href: ConsoleLinks.path("/console/orders", query($0)),
                            label: $0.map(OrderBoard.label) ?? "Every state", current: $0 == status)
                    }),
                "state": day.map { "\(state), placed \($0.short), \($0.civil.year) (UTC)" } ?? state,
                "values": kept, "status": status?.rawValue ?? "", "filtered": !filter.isEmpty,
            ]
            if let bulk { data["bulk"] = OrderBoard.bulkForm(bulk) }
            let views = try await OrderBoard.views(console)
            (data["views"], data["hasViews"]) = (views, !views.isEmpty)
            data["canSaveView"] = console.may(SaveOrderView.action)
            if let next = page.nextCursor {
                data["next"] = ConsoleLinks.path("/console/orders", query(status).merging(["cursor": next]) { $1 })
            }
            return console.page("orders", title: "Orders", data)
        }
        get("orders/{id}", on: group) { console in try await console.orderPage(try console.routeID(), issues: []) }
        registerOrderRefunds(on: group, payments: payments)
        registerBulkOrders(on: group, payments: payments)
        registerOrderViews(on: group)
        for move in OrderMove.allCases {
            post("orders/{id}/\(move.rawValue)", on: group, holdsTransaction: !move.callsProvider) { console in
                let id = try console.routeID()
                return try await console.submit {
                    let detail = try await console.move(move, order: id, payments: payments)
                    return console.redirect(
                        "/console/orders/\(id.text)",
                        flash: "Order \(detail.order.shortID) is \(detail.order.status.rawValue).")
                } refused: { issues in
                    try await console.orderPage(id, issues: issues, values: console.form.values)
                }
            }
        }
    }
}

extension ConsoleRequest {
    /// Runs `move` on the order with the form's fields; a destructive move needs its confirmation.
    fileprivate func move(_ move: OrderMove, order id: UUID, payments: any PaymentGateway) async throws
        -> OrderDetail
    {
        if move.isDestructive { try form.confirm(move.rawValue) }
        switch move {
        case .accept, .deliver: return try await run(AdvanceOrder(orderID: id, move: move))
        case .ship:
            return try await stagedMove(
                ShipOrder(
                    orderID: id, carrier: form.text("carrier") ?? "",
                    trackingNumber: form.text("tracking_number") ?? "", payments: payments))
        case .cancel:
            return try await stagedMove(CancelOrder(orderID: id, reason: form.text("reason"), payments: payments))
        case .refund:
            return try await stagedMove(RefundOrder(orderID: id, reason: form.text("reason"), payments: payments))
        }
    }

    /// A move the payment provider acts on first; its refusal leaves the order unchanged (409, as the API answers).
    private func stagedMove<Move: StagedOrderMove>(_ move: Move) async throws -> OrderDetail {
        let outcome = try await runStaged(move)
        guard outcome.refused == nil else {
            throw Move.refusedByProvider
        }
        return outcome.detail
    }

    /// The order's page: lines, payment, shipping, the moves its state allows, and its audit
    /// trail when the role may read the log; `issues` next to the move's fields (422).
    func orderPage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let detail = try await read(GetOrder(id: id))
        let order = detail.order
        var data: [String: Any] = [
            "order": OrderView(order), "values": values,
            "lines": detail.lines.map { line in
                [
                    "line": line.line, "sku": line.sku, "name": line.name, "quantity": line.quantity,
                    "unit": line.paidIn == .usd ? Money.dollars(line.unitPrice) : Money.fitPoints(line.unitPrice),
                    "total": line.paidIn == .usd ? Money.dollars(line.total) : Money.fitPoints(line.total),
                ] as [String: Any]
            },
            "address": [
                order.shipping.address.line1, order.shipping.address.line2, order.shipping.address.city,
                order.shipping.address.region,
                order.shipping.address.postalCode, order.shipping.address.country,
            ].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", "),
            "erased": order.shipping.erased,
        ]
        FormRefusal(issues).add(to: &data)
        let pending = try await pendingApprovals(on: "order", id.text)
        (data["pending"], data["hasPending"]) = (pending, !pending.isEmpty)
        if let payment = detail.payment {
            var shown: [String: Any] = [
                "status": payment.status.rawValue, "amount": Money.dollars(payment.amountCents),
                "captured": Money.dollars(payment.capturedCents),
                "refunded": Money.dollars(payment.refundedCents),
            ]
            if let failure = payment.failureCode { shown["failure"] = failure }
            data["payment"] = shown
        }
        // The moves the order's state allows and the operator's role may make.
        for move in OrderMove.allCases
        where OrderTransition.sources(of: move.target).contains(order.status) && may(move.action) {
            data["can_\(move.rawValue)"] = true
        }
        OrderRefundForm.add(detail, to: &data)
        if may(ListAuditEvents.action) {
            let events = try await read(ListAuditEvents(filter: AuditFilter(targetID: id.text), afterID: 0, limit: 100))
            data["trail"] = events.map(AuditEventView.init)
            data["hasTrail"] = !events.isEmpty
        }
        return page(
            "order", title: "Order \(order.shortID)", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// The orders board's states and rows.
enum OrderBoard {
    /// The board's table rows, one per order, written in Swift: the board is the console's
    /// busiest page (docs/decisions/console-tables-in-swift.md).
    /// With `bulk`, each row starts with its order's checkbox (`order_<id>`) and, to ship, its
    /// tracking number's field (`tracking_<id>`).
    static func rows(_ orders: some Sequence<Order>, bulk: OrderMove? = nil) -> HTML {
        HTML(
            joining: orders.lazy.map { order in
                let view = OrderView(order)
                let select: HTML =
                    switch bulk {
                    case nil: ""
                    case .ship?:
                        """
                        <td><input type="checkbox" name="order_\(view.id)" value="yes"
                          aria-label="Select order \(view.shortID)"></td>
                        <td><input name="tracking_\(view.id)" size="14"
                          aria-label="Tracking number of order \(view.shortID)"></td>
                        """
                    case _?:
                        """
                        <td><input type="checkbox" name="order_\(view.id)" value="yes"
                          aria-label="Select order \(view.shortID)"></td>
                        """
                    }
                return """
                    <tr>
                      \(select)<td><a href="/console/orders/\(view.id)"><code>\(view.shortID)</code></a></td>
                      <td>\(view.placed.html)</td>
                      <td>\(view.customerName)</td>
                      <td class="num">\(view.lines)</td>
                      <td class="num">\(view.total)</td>
                      <td><span class="tag \(view.status)">\(view.state)</span></td>
                    </tr>

                    """
            })
    }

    /// The board's tabs, in the order an order moves through them.
    static let tabs: [Order.Status] = [
        .paid, .accepted, .shipped, .delivered, .pendingPayment, .cancelled, .refunded, .paymentFailed,
    ]

    static func label(_ status: Order.Status) -> String {
        switch status {
        case .paid: "To accept"
        case .accepted: "To ship"
        case .shipped: "Shipped"
        case .delivered: "Delivered"
        case .pendingPayment: "Awaiting payment"
        case .cancelled: "Cancelled"
        case .refunded: "Refunded"
        case .paymentFailed: "Payment failed"
        }
    }

    /// The state a query names; the board opens on the orders to accept.
    static func status(_ text: String?) throws -> Order.Status {
        guard let text else { return .paid }
        guard let status = Order.Status(rawValue: text) else {
            throw DomainError.invalid([
                FieldIssue(field: "status", code: "unknown_status", message: "is not an order state")
            ])
        }
        return status
    }
}

extension OrderMove {
    /// Cancel and refund give money back and cannot be undone: the form asks to confirm.
    fileprivate var isDestructive: Bool { self == .cancel || self == .refund }
}

/// An order as the board and its page show it.
struct OrderView {
    let id: String, shortID: String, status: String, state: String, total: String, placed: ShownTime, lines: Int
    let customerName: String, carrier: String?, trackingNumber: String?, reason: String?

    init(_ order: Order) {
        id = order.id.text
        shortID = order.shortID
        status = order.status.rawValue
        state = OrderBoard.label(order.status)
        total = [
            order.totalCents > 0 ? Money.dollars(order.totalCents) : nil,
            order.totalFitPoints > 0 ? Money.fitPoints(order.totalFitPoints) : nil,
        ]
        .compactMap { $0 }.joined(separator: " + ")
        placed = ConsoleTime.text(order.createdAt)
        lines = order.lineCount
        customerName = order.shipping.erased ? "(erased)" : order.shipping.name
        carrier = order.carrier
        trackingNumber = order.trackingNumber
        reason = order.statusReason
    }
}

extension Order {
    /// The first 8 characters of its id, as people quote an order.
    var shortID: String { String(id.text.prefix(8)) }
}

extension OrderBoard {
    /// The board's filter from its form (`from` and `to`, UTC days, both included; `sku`; `min_usd`
    /// and `max_usd`, dollars), and the fields given, which its links keep.
    /// - Throws: 422 for a day or an amount that is not one.
    static func filter(_ form: ConsoleForm) throws -> (OrderFilter, [String: String]) {
        var filter = OrderFilter()
        var kept: [String: String] = [:]
        for name in ["from", "to", "sku", "min_usd", "max_usd"] {
            if let value = form.text(name) { kept[name] = value }
        }
        filter.placedFrom = try form.text("from").map { try ReportRange.day($0, field: "from").start }
        filter.placedTo = try form.text("to").map { try ReportRange.day($0, field: "to").advanced(by: 1).start }
        filter.sku = form.text("sku")
        filter.totalMinCents = try form.text("min_usd").map { try Money.cents($0, field: "min_usd") }
        filter.totalMaxCents = try form.text("max_usd").map { try Money.cents($0, field: "max_usd") }
        return (filter, kept)
    }
}
