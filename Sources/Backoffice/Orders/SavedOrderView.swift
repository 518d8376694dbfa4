import BackofficePlatform
import Foundation
import PostgresNIO

/// An operator's saved view of the orders board (table `order_views`): a name, and the state and
/// filter it opens the board on. Each operator sees only its own: row-level security narrows the
/// table to the tenant and the operator the transaction acts for, so another operator's view is
/// not found.
package struct SavedOrderView: Sendable, Equatable, RowDecodable {
    package let id: UUID
    package let name: String
    package let status: Order.Status?
    package let filter: OrderFilter
    package let createdAt: Date

    /// How many views one operator may keep.
    package static let limit = 50

    package static let columns = """
        id, name, status, placed_from, placed_to, sku, total_min_cents, total_max_cents, created_at
        """

    package init(row: PostgresRow) throws {
        var c = RowCells(row, of: "order view")
        (id, name) = (try c.next(), try c.next())
        status = try c.next(String?.self).map { try Order.Status(known: $0) }
        filter = OrderFilter(
            placedFrom: try c.next(), placedTo: try c.next(), sku: try c.next(), totalMinCents: try c.next(),
            totalMaxCents: try c.next())
        createdAt = try c.next()
    }

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let name: String, status: String?, sku: String? }
            return try AuditRecord.json(Snapshot(name: name, status: status?.rawValue, sku: filter.sku))
        }
    }
}

/// The operator's saved views, by name (`order_views.list`).
package struct ListSavedOrderViews: Query {
    package static let action: Action = "order_views.list"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> [SavedOrderView] {
        try await unit.all(
            """
            SELECT \(unescaped: SavedOrderView.columns) FROM order_views
            ORDER BY lower(name), id LIMIT \(SavedOrderView.limit)
            """)
    }
}

/// The operator saves the board's state and filter under a name (`order_views.create`, audited):
/// 1 to 60 characters, unique per operator whatever its case (409 `view_name_taken`), at most 50
/// views (409 `too_many_views`); the filter checked as the list checks it (422).
package struct SaveOrderView: AuditedOperation {
    package static let action: Action = "order_views.create"
    let name: String
    let status: Order.Status?
    let filter: OrderFilter

    package init(name: String, status: Order.Status?, filter: OrderFilter) {
        (self.name, self.status, self.filter) = (name.trimmingCharacters(in: .whitespacesAndNewlines), status, filter)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<SavedOrderView> {
        var validation = Validation()
        validation.text(name, "name", max: 60)
        try validation.check()
        try filter.check(tenant: unit.tenantScope)
        guard let operatorID = unit.principal.operatorID else {
            throw DomainError.forbiddenTarget(
                Self.action, code: "operator_only", detail: "Only an operator saves views.")
        }
        // One writer per operator at a time: the count and the name are checked under the lock.
        try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('order_views:' || \(operatorID.text)))")
        let kept = try await unit.first("SELECT count(*) FROM order_views", { try $0.decode(Int64.self) }) ?? 0
        guard kept < SavedOrderView.limit else {
            throw DomainError.conflict(
                code: "too_many_views", detail: "You keep \(SavedOrderView.limit) views; delete one first.")
        }
        let taken = try await unit.first(
            "SELECT 1 FROM order_views WHERE lower(name) = lower(\(name))", { try $0.decode(Int32.self) })
        guard taken == nil else {
            throw DomainError.conflict(code: "view_name_taken", detail: "You have a view named \(name) already.")
        }
        let id = unit.newID()
        let view = try await unit.one(
            """
            INSERT INTO order_views (tenant_id, id, operator_id, name, status, placed_from, placed_to, sku,
                total_min_cents, total_max_cents, created_at)
            VALUES (\(unit.principal.tenantID), \(id), \(operatorID), \(name), \(status?.rawValue),
                \(filter.placedFrom), \(filter.placedTo), \(filter.sku), \(filter.totalMinCents),
                \(filter.totalMaxCents), \(unit.now))
            RETURNING \(unescaped: SavedOrderView.columns)
            """, as: SavedOrderView.self, else: DomainError.inconsistent("the view was not returned"))
        return Audited(
            view,
            event: AuditRecord(
                action: Self.action, tenantID: unit.principal.tenantID, targetType: "order_view", targetID: id.text,
                reason: nil, before: nil, after: try view.snapshot))
    }
}

/// The operator deletes one of its views (`order_views.delete`, audited); another's is not found.
package struct DeleteSavedOrderView: AuditedOperation {
    package static let action: Action = "order_views.delete"
    let id: UUID

    package func perform(in unit: UnitOfWork) async throws -> Audited<SavedOrderView> {
        let view = try await unit.one(
            "DELETE FROM order_views WHERE id = \(id) RETURNING \(unescaped: SavedOrderView.columns)",
            as: SavedOrderView.self, else: DomainError.notFound("Order view \(id.text)"))
        return Audited(
            view,
            event: AuditRecord(
                action: Self.action, tenantID: unit.principal.tenantID, targetType: "order_view", targetID: id.text,
                reason: nil, before: try view.snapshot, after: nil))
    }
}
