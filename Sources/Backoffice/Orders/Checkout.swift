import BackofficePlatform
import Crypto
import Foundation
import PostgresNIO

/// What the app sends to place an order.
package struct CheckoutRequest: Sendable {
    package struct Line: Sendable {
        package var goodID: UUID
        package var quantity: Int
        package var payIn: OrderLine.Currency
        /// The unit price the customer saw, in `payIn`'s currency (cents or FitPoints): the order
        /// is placed only at that price.
        package var expectedUnitPrice: Int64?

        package init(goodID: UUID, quantity: Int, payIn: OrderLine.Currency, expectedUnitPrice: Int64?) {
            (self.goodID, self.quantity, self.payIn, self.expectedUnitPrice) = (
                goodID, quantity, payIn, expectedUnitPrice
            )
        }

        /// The request's field that carries the expected price of line `index`.
        func expectedPriceField(_ index: Int) -> String {
            "lines[\(index)].expected_unit_price_" + (payIn == .usd ? "cents" : "fitpoints")
        }
    }

    package var customerID: UUID
    package var lines: [Line]
    package var shipping: Order.Shipping
    /// The provider's payment method (the simulated provider reads Stripe's test card numbers);
    /// needed when a line is paid in US dollars. Passed to the provider, never stored or logged.
    package var paymentMethod: String?

    package init(customerID: UUID, lines: [Line], shipping: Order.Shipping, paymentMethod: String?) {
        self.customerID = customerID
        self.lines = lines
        self.shipping = Order.Shipping(
            name: shipping.name.trimmingCharacters(in: .whitespacesAndNewlines), address: shipping.address.trimmed)
        self.paymentMethod = paymentMethod?.trimmingCharacters(in: .whitespaces)
    }
}

/// The app places a customer's order (`orders.checkout`): lines of goods from one partner, each
/// paid in US dollars or in FitPoints (an order may split), at the prices the customer saw (409
/// `price_changed`). A staged operation: no transaction waits on the payment provider.
///
/// 1. `reserve`, one transaction: the customer must be active (409 `account_locked`), the goods
///    active and from one partner, their stock reserved (rows locked in id order, never below
///    zero: 409 `out_of_stock`), the FitPoints debited from the customer's wallet through the
///    ledger (409 `insufficient_fitpoints`), and the order created: `paid` when it has no dollar
///    part (done), otherwise `pending_payment` with its payment `authorizing` under the
///    provider idempotency key derived from the request's Idempotency-Key;
/// 2. `call`: the dollar part authorized by the provider, no transaction open;
/// 3. `record`, a second transaction: authorized → `paid`; pending → stays `pending_payment`
///    until the provider's webhook; declined → payment `failed`, order `payment_failed`, its stock
///    and FitPoints given back (answered 402). No verdict (503) leaves the payment `authorizing`:
///    the same request again completes it, and reconciliation resolves what no one retries.
package struct Checkout: StagedOperation {
    package static let action: Action = "orders.checkout"
    let request: CheckoutRequest
    let payments: any PaymentGateway
    /// Scopes the provider's idempotency key (the client's Idempotency-Key; the order id without one).
    let idempotencyKey: String?

    package init(_ request: CheckoutRequest, payments: any PaymentGateway, idempotencyKey: String?) {
        self.request = request
        self.payments = payments
        self.idempotencyKey = idempotencyKey
    }

    /// What the authorization needs, kept until its verdict is recorded (no card number: the
    /// request that completes it carries that).
    package struct Reservation: Codable, Sendable {
        package let orderID: UUID
        package let paymentID: UUID
        package let amountCents: Int64
        /// What the provider deduplicates the authorization on.
        package let providerKey: String
    }

    /// The order after checkout; `declined` names the provider's reason when its payment was refused.
    package struct Placed: Sendable {
        package let detail: OrderDetail
        package var declined: String? {
            detail.order.status == .paymentFailed ? detail.payment?.failureCode ?? "payment_failed" : nil
        }
    }

    package func ready() throws {
        if request.lines.contains(where: { $0.payIn == .usd }) { try payments.refuseWhileUnavailable() }
    }

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<Reservation, Placed>> {
        try validate()
        try await ActiveCustomer.require(request.customerID, holding: .share, cannot: "check out", in: unit)
        let goods = try await lockGoods(in: unit)
        let tenants = Set(goods.values.map(\.tenantID))
        guard tenants.count == 1, let tenant = tenants.first else {
            throw DomainError.unprocessable(
                code: "mixed_partners", detail: "An order holds goods of one partner; place one order per partner.",
                issues: [FieldIssue(field: "lines", code: "mixed_partners", message: "goods of more than one partner")])
        }
        var lines: [OrderLine] = []
        for (index, line) in request.lines.enumerated() {
            guard let good = goods[line.goodID] else { throw DomainError.inconsistent("a locked good went missing") }
            guard let price = line.payIn == .usd ? good.priceCents : good.priceFitPoints else {
                throw DomainError.invalid(
                    "lines[\(index)].pay_in", "no_price", "'\(good.sku)' has no price in \(line.payIn.rawValue)")
            }
            lines.append(
                OrderLine(
                    line: index + 1, goodID: good.id, sku: good.sku, name: good.name, quantity: line.quantity,
                    paidIn: line.payIn, unitPrice: price))
        }
        try requireExpectedPrices(lines)
        let short = lines.filter { line in (goods[line.goodID]?.stock ?? 0) < Int64(line.quantity) }
        guard short.isEmpty else {
            throw DomainError.conflict(
                code: "out_of_stock",
                detail: "Not enough in stock: \(short.map(\.sku).joined(separator: ", ")). Nothing was reserved.")
        }
        let orderID = unit.newID()
        let totalCents = lines.filter { $0.paidIn == .usd }.reduce(0) { $0 + $1.total }
        let totalPoints = lines.filter { $0.paidIn == .fitpoints }.reduce(0) { $0 + $1.total }
        try await unit.execute(
            """
            UPDATE goods g SET stock = g.stock - r.quantity, updated_at = \(unit.now), version = g.version + 1
            FROM unnest(\(lines.map(\.goodID))::uuid[], \(lines.map { Int32($0.quantity) })::int4[]) AS r(id,
                quantity) WHERE g.id = r.id
            """)
        if totalPoints > 0 {
            try await Ledger.post(
                [
                    Ledger.Transfer(
                        .redemption, from: Ledger.wallet(request.customerID), to: Ledger.redemption,
                        amount: totalPoints,
                        reason: "order \(orderID.text)", sourceEventID: "order:\(orderID.text)")
                ], movement: orderID, in: unit)
        }
        let reservation =
            totalCents > 0
            ? Reservation(
                orderID: orderID, paymentID: unit.newID(), amountCents: totalCents,
                providerKey: providerKey(order: orderID, in: unit))
            : nil
        let status: Order.Status = reservation == nil ? .paid : .pendingPayment
        // The order, its lines and its payment in one statement (the lines' and payment's
        // references to the order are checked at its end).
        let order = try await unit.one(
            """
            WITH o AS (
                INSERT INTO orders (tenant_id, id, customer_id, status, total_cents, total_fitpoints, shipping_name,
                    shipping_address, line_count,
                    created_at, updated_at)
                VALUES (\(tenant), \(orderID), \(request.customerID), \(status.rawValue), \(totalCents),
                    \(totalPoints), \(request.shipping.name),
                    \(try AuditRecord.json(request.shipping.address))::jsonb, \(Int32(lines.count)), \(unit.now),
                        \(unit.now))
                RETURNING *
            ), lines AS (
                INSERT INTO order_lines (tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price)
                SELECT \(tenant), \(orderID), l.line, l.good, l.sku, l.name, l.quantity, l.paid_in, l.price
                FROM unnest(\(lines.map { Int32($0.line) })::int4[], \(lines.map(\.goodID))::uuid[],
                    \(lines.map(\.sku))::text[],
                    \(lines.map(\.name))::text[], \(lines.map { Int32($0.quantity) })::int4[],
                        \(lines.map(\.paidIn.rawValue))::text[],
                    \(lines.map(\.unitPrice))::int8[]) AS l(line, good, sku, name, quantity, paid_in, price)
            ), payment AS (
                INSERT INTO payments (tenant_id, id, order_id, provider, status, amount_cents,
                    provider_idempotency_key, created_at, updated_at)
                SELECT \(tenant), \(reservation?.paymentID), \(orderID), \(payments.provider), 'authorizing',
                    \(totalCents),
                    \(reservation?.providerKey), \(unit.now), \(unit.now)
                WHERE \(reservation != nil)
            )
            SELECT \(unescaped: Order.columns) FROM o
            """, as: Order.self, else: DomainError.inconsistent("the new order was not returned"))
        let event = AuditRecord(
            action: Self.action, tenantID: tenant, targetType: "order", targetID: orderID.text, reason: nil,
            before: nil, after: try order.snapshot)
        guard let reservation else {
            return Audited(.done(Placed(detail: OrderDetail(order: order, lines: lines, payment: nil))), event: event)
        }
        return Audited(.call(reservation), event: event)
    }

    package func call(_ reservation: Reservation) async throws -> PaymentOutcome {
        try await payments.call {
            try await $0.authorize(
                PaymentAuthorization(
                    amountCents: reservation.amountCents, cardNumber: request.paymentMethod ?? "",
                    idempotencyKey: reservation.providerKey,
                    reference: reservation.orderID.text))
        }
    }

    package func record(_ verdict: PaymentOutcome, for reservation: Reservation, in unit: UnitOfWork) async throws
        -> Audited<Placed>
    {
        let payment = try await Payment.locked(reservation.paymentID, in: unit)
        let before = try await Order.fetch(reservation.orderID, forUpdate: true, in: unit)
        guard let after = try await PaymentCompletion.authorization(verdict, payment, before, in: unit) else {
            // recorded first by reconciliation
            return .unchanged(Placed(detail: try await OrderDetail.load(before, in: unit)))
        }
        let detail = try await OrderDetail.load(after, in: unit)
        return Audited(
            Placed(detail: detail),
            event: AuditRecord.order(
                after, action: Self.action,
                reason: "the payment provider's verdict: \(detail.payment?.status.rawValue ?? "none")",
                before: try before.snapshot,
                after: try after.snapshot
            ))
    }

    /// The key the provider deduplicates this order's authorization on: derived from the client's
    /// Idempotency-Key and principal (hashed: the client's key never leaves), the order's id without one.
    private func providerKey(order: UUID, in unit: UnitOfWork) -> String {
        guard let idempotencyKey else { return "checkout:\(order.text)" }
        return "checkout:" + unit.principal.scopedKeyHash(idempotencyKey)
    }

    private func validate() throws {
        var validation = Validation()
        validation.require(
            (1...50).contains(request.lines.count), "lines", "out_of_range", "an order has 1 to 50 lines")
        validation.require(
            Set(request.lines.map(\.goodID)).count == request.lines.count, "lines", "duplicate_good",
            "each good once (raise its quantity)")
        for (index, line) in request.lines.enumerated() {
            validation.require(
                (1...100).contains(line.quantity), "lines[\(index)].quantity", "out_of_range", "must be from 1 to 100")
            validation.require(
                line.expectedUnitPrice != nil, line.expectedPriceField(index), "required",
                "the unit price the customer saw")
        }
        validation.text(request.shipping.name, "shipping.name", max: 200)
        let address = request.shipping.address
        for (field, value) in [
            ("line1", address.line1), ("city", address.city), ("region", address.region),
            ("postal_code", address.postalCode),
            ("country", address.country),
        ] {
            validation.text(value, "shipping.address.\(field)", max: 200)
        }
        validation.text(address.line2, "shipping.address.line2", max: 200, required: false)
        if request.lines.contains(where: { $0.payIn == .usd }) {
            validation.text(request.paymentMethod, "payment_method", max: 200)
        }
        try validation.check()
    }

    /// Every line's price is the one the customer saw.
    /// - Throws: `outdated(price_changed)` naming each line whose price changed, with its price
    ///   now; nothing has been reserved yet.
    private func requireExpectedPrices(_ lines: [OrderLine]) throws {
        let changed = zip(request.lines, lines).enumerated().compactMap { index, pair -> FieldIssue? in
            let (asked, line) = pair
            guard asked.expectedUnitPrice != line.unitPrice else { return nil }
            return FieldIssue(
                field: asked.expectedPriceField(index), code: "price_changed",
                message: "'\(line.sku)' costs \(line.unitPrice) \(line.paidIn == .usd ? "cents" : "FitPoints") now",
                current: String(line.unitPrice))
        }
        guard changed.isEmpty else {
            throw DomainError.outdated(
                code: "price_changed",
                detail: "A price changed since the customer saw it; nothing was reserved. Show the new prices.",
                issues: changed)
        }
    }

    /// The order's goods, locked in id order (concurrent checkouts of the same goods queue, never
    /// deadlock). A good that is missing, another's draft or archived is 422 naming the line.
    private func lockGoods(in unit: UnitOfWork) async throws -> [UUID: Good] {
        let ids = request.lines.map(\.goodID)  // locked in id order by the statement's ORDER BY
        let rows: [Good] = try await unit.all(
            "SELECT \(unescaped: Good.columns) FROM goods WHERE id = ANY(\(ids)::uuid[]) ORDER BY id FOR UPDATE")
        let goods = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        var validation = Validation()
        for (index, line) in request.lines.enumerated() {
            validation.require(
                goods[line.goodID]?.status == .active, "lines[\(index)].good_id", "unavailable", "no such good on sale")
        }
        try validation.check()
        return goods
    }
}
