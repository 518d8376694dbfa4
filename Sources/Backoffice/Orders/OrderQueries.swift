import Foundation
import PostgresNIO

/// The principal's tenant's orders, newest first, optionally in one state (`orders.list`); a
/// platform role sees every partner's.
public struct ListOrders: Query {
    public static let action: Action = "orders.list"
    let status: Order.Status?
    let before: (Date, UUID)?
    let limit: Int

    public init(status: Order.Status?, before: (Date, UUID)?, limit: Int) {
        (self.status, self.before, self.limit) = (status, before, limit)
    }

    public func read(in unit: UnitOfWork) async throws -> [Order] {
        let start = before ?? (Date.distantFuture, platformTenantID)
        // A partner's own orders by its index (row-level security would allow no others anyway).
        let tenant = unit.principal.tenantID == platformTenantID ? nil : unit.principal.tenantID
        return try await unit.all(
            """
            SELECT \(unescaped: Order.columns) FROM orders o
            WHERE (\(tenant)::uuid IS NULL OR o.tenant_id = \(tenant)) AND (\(status?.rawValue)::text IS NULL OR o.status = \(status?.rawValue))
              AND (o.created_at, o.id) < (\(start.0), \(start.1))
            ORDER BY o.created_at DESC, o.id DESC LIMIT \(limit)
            """)
    }
}

/// One order with its lines and payment (`orders.read`); another partner's is 404.
public struct GetOrder: Query {
    public static let action: Action = "orders.read"
    let id: UUID
    public init(id: UUID) { self.id = id }
    public func read(in unit: UnitOfWork) async throws -> OrderDetail { try await OrderDetail.load(try await Order.fetch(id, in: unit), in: unit) }
}
