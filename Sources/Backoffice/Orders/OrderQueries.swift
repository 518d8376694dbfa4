import BackofficePlatform
import Foundation
import PostgresNIO

/// The principal's tenant's orders, newest first, optionally in one state (`orders.list`); a
/// platform role sees every partner's.
package struct ListOrders: Query {
    package static let action: Action = "orders.list"
    let status: Order.Status?
    let before: (Date, UUID)?
    let limit: Int
    /// Narrows the page further (placed range, SKU, customer, total); empty by default.
    let filter: OrderFilter

    package init(status: Order.Status?, before: (Date, UUID)?, limit: Int, filter: OrderFilter = OrderFilter()) {
        (self.status, self.before, self.limit, self.filter) = (status, before, limit, filter)
    }

    package func read(in unit: UnitOfWork) async throws -> [Order] {
        var orders: [Order] = []
        let masks = unit.context.masksPII
        try await eachRow(in: unit) { orders.append(masks ? try Order(row: $0).masked : try Order(row: $0)) }
        return orders
    }

    /// Calls `body` with each row of the page (`Order.columns`) as it arrives, newest first, at
    /// most `limit`.
    func eachRow(in unit: UnitOfWork, _ body: (PostgresRow) throws -> Void) async throws {
        let start = before ?? (Date.distantFuture, platformTenantID)
        // A partner's own orders by its index (row-level security would allow no others anyway).
        let tenant = unit.tenantScope
        guard filter.isEmpty else {
            try filter.check(tenant: tenant)
            _ = try await unit.all(filter.page(tenant: tenant, status: status, before: start, limit: limit), body)
            return
        }
        try await eachRow(PageFetches.smallest(holding: limit), tenant: tenant, before: start, in: unit, body)
    }

    private func eachRow<Fetch: PageFetch>(
        _: Fetch.Type, tenant: UUID?, before start: (Date, UUID), in unit: UnitOfWork,
        _ body: (PostgresRow) throws -> Void
    ) async throws {
        switch (tenant, status) {
        case (let tenant?, let status?):
            try await unit.eachRow(
                OrderPage<PartnerOrdersInState, Fetch>(before: start, tenant: tenant, status: status), limit: limit,
                body)
        case (let tenant?, nil):
            try await unit.eachRow(OrderPage<PartnerOrders, Fetch>(before: start, tenant: tenant), limit: limit, body)
        case (nil, let status?):
            try await unit.eachRow(
                OrderPage<AllOrdersInState, Fetch>(before: start, status: status), limit: limit, body)
        case (nil, nil): try await unit.eachRow(OrderPage<AllOrders, Fetch>(before: start), limit: limit, body)
        }
    }
}

/// A page of orders, newest first, as a prepared statement: PostgreSQL plans each shape once per
/// connection, not on every request (docs/decisions/list-pages-planned-once.md). Each shape's
/// filter is one its index serves, without the `$1 IS NULL OR …` that a cached generic plan could
/// not use an index for. `$1`, `$2` are the keyset; a shape's filter reads the tenant (when it has
/// one) as `$3`, then the status.
struct OrderPage<Shape: PageShape, Fetch: PageFetch>: PostgresPreparedStatement {
    static var name: String { "orders_page_\(Shape.name)_\(Fetch.rows)" }
    static var sql: String {
        """
        SELECT \(Order.columns) FROM orders o WHERE \(Shape.filter) AND (o.created_at, o.id) < ($1, $2)
        ORDER BY o.created_at DESC, o.id DESC LIMIT \(Fetch.rows)
        """
    }
    let before: (Date, UUID)
    var tenant: UUID? = nil
    var status: Order.Status? = nil

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(before.0)
        bindings.append(before.1)
        if let tenant { bindings.append(tenant) }
        if let status { bindings.append(status.rawValue) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// One partner's orders (`OrderPage` shapes follow).
enum PartnerOrders: PageShape {
    static let name = "partner"
    static let filter = "o.tenant_id = $3"
}

/// One partner's orders in one state.
enum PartnerOrdersInState: PageShape {
    static let name = "partner_state"
    static let filter = "o.tenant_id = $3 AND o.status = $4"
}

/// Every partner's orders (platform roles).
enum AllOrders: PageShape {
    static let name = "all"
    static let filter = "true"
}

/// Every partner's orders in one state (platform roles).
enum AllOrdersInState: PageShape {
    static let name = "all_state"
    static let filter = "o.status = $3"
}

/// One order with its lines and payment (`orders.read`); another partner's is 404.
package struct GetOrder: Query {
    package static let action: Action = "orders.read"
    let id: UUID
    package init(id: UUID) { self.id = id }
    package func read(in unit: UnitOfWork) async throws -> OrderDetail {
        let order = try await Order.fetch(id, in: unit)
        return try await OrderDetail.load(unit.context.masksPII ? order.masked : order, in: unit)
    }
}

/// How many of the principal's tenant's orders are in each state (`orders.list`), for a shop's
/// home: what there is to handle. A platform role counts every tenant's. Read from the daily
/// figures the orders' trigger keeps (`shop_daily_orders`, exact at every commit): a few rows a
/// day instead of every order (counting 50,000 orders took 19 ms, most of a home's time).
package struct OrderCountsByStatus: Query {
    package static let action: Action = ListOrders.action

    package init() {}

    package func read(in unit: UnitOfWork) async throws -> [Order.Status: Int] {
        let tenant = unit.tenantScope
        var counts: [Order.Status: Int] = [:]
        for (status, count) in try await unit.all(
            """
            SELECT status, sum(orders)::bigint FROM shop_daily_orders
            WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant)) GROUP BY status
            """,
            { try $0.decode((String, Int64).self) })
        {
            counts[try Order.Status(known: status)] = Int(count)
        }
        return counts
    }
}
