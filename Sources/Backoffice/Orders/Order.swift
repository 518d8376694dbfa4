import BackofficePlatform
import Foundation
import PostgresNIO

/// A customer's order from one partner, as placed at checkout. It keeps what the partner needs
/// to fulfil it — lines at the price paid, the shipping name and address — and never the
/// customer's account, email or other orders (the API does not show `customerID` to anyone).
package struct Order: Sendable, Equatable {
    /// pending_payment → paid → accepted → shipped → delivered; cancelled (before shipping) and
    /// refunded (after); payment_failed (its payment declined: stock and FitPoints given back).
    /// `OrderTransition` says which moves are allowed.
    package enum Status: String, Sendable, Codable, CaseIterable {
        case pendingPayment = "pending_payment"
        case paid, accepted, shipped, delivered, cancelled, refunded
        case paymentFailed = "payment_failed"
    }

    package var id: UUID
    package var tenantID: UUID
    package var customerID: UUID
    package var status: Status
    package var totalCents: Int64
    package var totalFitPoints: Int64
    package var shipping: Shipping
    package var carrier: String?
    package var trackingNumber: String?
    package var statusReason: String?
    package var lineCount: Int
    package var createdAt: Date
    package var updatedAt: Date
    package var version: Int64

    /// Where the partner ships it. Once the customer's account is purged, erased: the name reads
    /// `erased`, every field of the address is empty, and `erased` is true (the order keeps its
    /// amounts, dates and lines).
    package struct Shipping: Sendable, Equatable {
        package var name: String
        package var address: ShopAddress
        package var erased = false

        package init(name: String, address: ShopAddress, erased: Bool = false) {
            self.name = name
            self.address = address
            self.erased = erased
        }

        /// What an erased order shows.
        static let erasedShipping = Shipping(
            name: "erased",
            address: ShopAddress(line1: "", line2: nil, city: "", region: "", postalCode: "", country: ""),
            erased: true)
    }

    /// This order with its personal data masked (for `pii: masked` roles): the shipping name,
    /// street lines and postal code.
    package var masked: Order {
        guard !shipping.erased else { return self }
        var copy = self
        copy.shipping = Shipping(name: PIIMask.name(shipping.name), address: PIIMask.address(shipping.address))
        return copy
    }

    /// What the audit log keeps of it (no customer id: partners read their tenant's audit trail).
    var snapshot: String? {
        get throws {
            struct Snapshot: Encodable {
                let status: String, total_cents: Int64, total_fitpoints: Int64, carrier: String?,
                    tracking_number: String?, status_reason: String?
            }
            return try AuditRecord.json(
                Snapshot(
                    status: status.rawValue, total_cents: totalCents, total_fitpoints: totalFitPoints, carrier: carrier,
                    tracking_number: trackingNumber,
                    status_reason: statusReason))
        }
    }
}

/// One line of an order: the good as sold, at the price paid.
package struct OrderLine: Sendable, Equatable {
    package enum Currency: String, Sendable, Codable { case usd, fitpoints }
    package var line: Int
    package var goodID: UUID
    package var sku: String
    package var name: String
    package var quantity: Int
    package var paidIn: Currency
    /// Cents or FitPoints per unit, as paid.
    package var unitPrice: Int64
    /// Units given back by partial refunds (succeeded or under way).
    package var refundedQuantity = 0

    package var total: Int64 { unitPrice * Int64(quantity) }
}

/// The moves an order's status may make, and who makes them.
package enum OrderTransition {
    /// The states an order may move to `target` from.
    package static func sources(of target: Order.Status) -> Set<Order.Status> {
        switch target {
        case .pendingPayment: []
        case .paid: [.pendingPayment]
        case .accepted: [.paid]
        case .shipped: [.accepted]
        case .delivered: [.shipped]
        case .cancelled: [.pendingPayment, .paid, .accepted]
        case .refunded: [.shipped, .delivered]
        case .paymentFailed: [.pendingPayment]
        }
    }

    /// Throws 409 with the current state unless `order` may move to `target`.
    static func check(_ order: Order, to target: Order.Status) throws {
        guard sources(of: target).contains(order.status) else {
            let from = sources(of: target).map(\.rawValue).sorted().joined(separator: " or ")
            throw DomainError.invalidTransition(
                "Only an order that is \(from) can become \(target.rawValue).", current: order.status.rawValue)
        }
    }
}

extension Order: RowDecodable {
    /// The select list over `o`. The line count is the order's own `line_count`, which the
    /// database keeps equal to its lines (migration 0021).
    package static let columns = """
        o.id, o.tenant_id, o.customer_id, o.status, o.total_cents, o.total_fitpoints, o.shipping_name,
            o.shipping_address->>'line1',
        o.shipping_address->>'line2', o.shipping_address->>'city', o.shipping_address->>'region',
            o.shipping_address->>'postal_code',
        o.shipping_address->>'country', o.carrier, o.tracking_number, o.status_reason, o.line_count, o.created_at,
            o.updated_at, o.version
        """

    package init(row: PostgresRow) throws {
        var c = RowCells(row, of: "orders")
        let (id, tenantID, customerID): (UUID, UUID, UUID) = (try c.next(), try c.next(), try c.next())
        let status = try Status(known: try c.next())
        let (totalCents, totalFitPoints, shippingName): (Int64, Int64, String) = (
            try c.next(), try c.next(), try c.next()
        )
        // A purged customer's order has an empty address (`{}`): every field is NULL, line1 included,
        // which checkout always sets.
        let line1: String? = try c.next()
        let (line2, city, region): (String?, String?, String?) = (try c.next(), try c.next(), try c.next())
        let (postalCode, country): (String?, String?) = (try c.next(), try c.next())
        let shipping =
            if let line1, let city, let region, let postalCode, let country {
                Shipping(
                    name: shippingName,
                    address: ShopAddress(
                        line1: line1, line2: line2, city: city, region: region, postalCode: postalCode,
                        country: country))
            } else {
                Shipping.erasedShipping
            }
        self.init(
            id: id, tenantID: tenantID, customerID: customerID, status: status, totalCents: totalCents,
            totalFitPoints: totalFitPoints,
            shipping: shipping, carrier: try c.next(),
            trackingNumber: try c.next(),
            statusReason: try c.next(), lineCount: Int(try c.next(Int32.self)), createdAt: try c.next(),
            updatedAt: try c.next(),
            version: try c.next())
    }

    /// The order, if the principal's tenant sees it; with `forUpdate`, locked until the unit ends.
    /// - Throws: `DomainError.notFound` (also for another partner's order: existence is not revealed).
    static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Order {
        try await unit.byID("orders o", alias: "o", id, forUpdate: forUpdate, notFound: "Order \(id.text)")
    }

    /// The order's lines, in order.
    static func lines(of id: UUID, in unit: UnitOfWork) async throws -> [OrderLine] {
        try await unit.all(
            "SELECT \(unescaped: OrderLine.columns) FROM order_lines WHERE order_id = \(id) ORDER BY line")
    }
}

extension OrderLine: RowDecodable {
    package static let columns = "line, good_id, sku, name, quantity, paid_in, unit_price, refunded_quantity"

    package init(row: PostgresRow) throws {
        let c = try row.decode((Int32, UUID, String, String, Int32, String, Int64, Int32).self)
        self.init(
            line: Int(c.0), goodID: c.1, sku: c.2, name: c.3, quantity: Int(c.4), paidIn: try Currency(known: c.5),
            unitPrice: c.6, refundedQuantity: Int(c.7))
    }
}

/// An order with everything its page shows: lines, payment and partial refunds.
package struct OrderDetail: Sendable {
    package let order: Order
    package let lines: [OrderLine]
    package let payment: Payment?
    package var refunds: [OrderRefund] = []

    static func load(_ order: Order, in unit: UnitOfWork) async throws -> OrderDetail {
        OrderDetail(
            order: order, lines: try await Order.lines(of: order.id, in: unit),
            payment: try await Payment.of(order: order.id, in: unit),
            refunds: try await OrderRefund.all(of: order.id, in: unit))
    }
}

extension AuditRecord {
    /// An event about `order`, on its partner's chain (never the customer's id: partners read it).
    static func order(_ order: Order, action: Action, reason: String?, before: String?, after: String?) -> AuditRecord {
        AuditRecord(
            action: action, tenantID: order.tenantID, targetType: "order", targetID: order.id.text, reason: reason,
            before: before, after: after)
    }
}
