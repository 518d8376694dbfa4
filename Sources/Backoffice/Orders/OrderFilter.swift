import BackofficeAPI
import BackofficePlatform
import Foundation
import PostgresNIO

/// What a list of orders may be narrowed to besides its status: when they were placed (from,
/// inclusive, to, exclusive), a good's SKU on one of their lines, a customer (platform roles
/// only: a shop's pages never name customers), and a range of their total in cents.
package struct OrderFilter: Sendable, Equatable {
    package var placedFrom, placedTo: Date?
    package var sku: String?
    package var customerID: UUID?
    package var totalMinCents, totalMaxCents: Int64?

    package init() {}

    /// A filter of the values given (a query's or a saved view's).
    package init(
        placedFrom: Date?, placedTo: Date?, sku: String?, customerID: UUID? = nil, totalMinCents: Int64?,
        totalMaxCents: Int64?
    ) {
        (self.placedFrom, self.placedTo, self.sku, self.customerID) = (placedFrom, placedTo, sku, customerID)
        (self.totalMinCents, self.totalMaxCents) = (totalMinCents, totalMaxCents)
    }

    /// Whether it narrows nothing (the list's prepared pages serve it).
    package var isEmpty: Bool { self == OrderFilter() }

    /// Its query parameters' names.
    static let names = ["placed_from", "placed_to", "sku", "customer_id", "total_min_cents", "total_max_cents"]

    /// Whether a query string names one of them (read before the query is parsed, to choose how
    /// the read session plans; a false positive only plans a prepared page for its values).
    static func filters(_ query: String?) -> Bool {
        guard let query, !query.isEmpty else { return false }
        return names.contains { query.contains($0 + "=") }
    }

    /// Reads one of its query parameters (`placed_from=2026-11-01T00:00:00Z`); false for a name
    /// that is not one of them.
    /// - Throws: 400 `malformed_request` for a value of the wrong type.
    mutating func read(_ name: String, _ value: String) throws -> Bool {
        switch name {
        case "placed_from": placedFrom = try Self.time(name, value)
        case "placed_to": placedTo = try Self.time(name, value)
        case "sku": sku = value
        case "customer_id":
            guard let id = UUID(uuidString: value) else { throw Problem.malformed("customer_id: must be a UUID") }
            customerID = id
        case "total_min_cents": totalMinCents = try Self.cents(name, value)
        case "total_max_cents": totalMaxCents = try Self.cents(name, value)
        default: return false
        }
        return true
    }

    private static func time(_ name: String, _ value: String) throws -> Date {
        guard let time = RFC3339DateTranscoder.parse(value) else {
            throw Problem.malformed("\(name): must be an RFC 3339 time (2026-11-01T00:00:00Z)")
        }
        return time
    }

    private static func cents(_ name: String, _ value: String) throws -> Int64 {
        guard let cents = Int64(value) else { throw Problem.malformed("\(name): must be a whole number of cents") }
        return cents
    }

    /// Checks it for a principal scoped to `tenant` (nil: a platform role).
    /// - Throws: 422 for a range that ends before it starts, a negative total, a SKU longer than
    ///   64 characters or holding NUL (which text cannot); 403 `customer_filter_forbidden` for a
    ///   shop's principal naming a customer.
    func check(tenant: UUID?) throws {
        var validation = Validation()
        if let from = placedFrom, let to = placedTo {
            validation.require(from < to, "placed_to", "before_start", "Must be later than placed_from.")
        }
        validation.require((totalMinCents ?? 0) >= 0, "total_min_cents", "out_of_range", "Must be 0 or more.")
        validation.require((totalMaxCents ?? 0) >= 0, "total_max_cents", "out_of_range", "Must be 0 or more.")
        if let low = totalMinCents, let high = totalMaxCents {
            validation.require(low <= high, "total_max_cents", "below_minimum", "Must be at least total_min_cents.")
        }
        validation.require((1...64).contains(sku?.count ?? 1), "sku", "length", "From 1 to 64 characters.")
        validation.require(sku?.contains("\0") != true, "sku", "invalid", "Must not contain a NUL character.")
        try validation.check()
        guard tenant == nil || customerID == nil else {
            throw DomainError.forbiddenTarget(
                ListOrders.action, code: "customer_filter_forbidden",
                detail: "Only platform roles filter orders by customer.")
        }
    }

    /// A page of orders (`Order.columns`), newest first, before the keyset `start`, of `tenant`
    /// (nil: every shop) and `status` when given, narrowed by this filter: at most `limit` rows.
    /// Only the conditions asked for are written, so the planner (planning for these values: the
    /// hot list's session plans `.auto` for a filtered page) picks the index each serves. A SKU is
    /// a semi-join the planner may drive from either side (`order_lines_by_sku` or the orders'
    /// index); forcing the lines first (a materialized CTE) was a third slower at 1,000,000 orders.
    func page(tenant: UUID?, status: Order.Status?, before start: (Date, UUID), limit: Int) -> PostgresQuery {
        var binds = PostgresBindings()
        var sql = "SELECT \(Order.columns) FROM orders o WHERE (o.created_at, o.id) < ($1, $2)"
        binds.append(start.0)
        binds.append(start.1)
        func and(_ condition: String, _ value: some PostgresNonThrowingEncodable) {
            binds.append(value)
            sql += " AND " + condition.replacingOccurrences(of: "?", with: "$\(binds.count)")
        }
        if let tenant { and("o.tenant_id = ?", tenant) }
        if let status { and("o.status = ?", status.rawValue) }
        if let placedFrom { and("o.created_at >= ?", placedFrom) }
        if let placedTo { and("o.created_at < ?", placedTo) }
        if let customerID { and("o.customer_id = ?", customerID) }
        if let totalMinCents { and("o.total_cents >= ?", totalMinCents) }
        if let totalMaxCents { and("o.total_cents <= ?", totalMaxCents) }
        if let sku {
            let line = "SELECT FROM order_lines l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.id AND l.sku = ?"
            and("EXISTS (\(line))", sku)
        }
        sql += " ORDER BY o.created_at DESC, o.id DESC LIMIT \(limit)"
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}
