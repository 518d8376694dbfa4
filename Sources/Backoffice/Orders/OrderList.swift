import BackofficeAPI
import Foundation
import NIOCore

/// One request for a page of a partner's orders, however it arrived (generated handler or the
/// hand-encoded fast path): validated once, run once.
struct OrderListRequest: Sendable {
    var limit: Int?
    var cursor: String?
    var status: String?

    /// Reads the query string of `GET /v1/orders`.
    init(query: String?) throws {
        let list = try ListQuery(query) { _, _ in }
        self.init(limit: list.limit, cursor: list.cursor, status: list.status)
    }

    init(limit: Int?, cursor: String?, status: String?) {
        (self.limit, self.cursor, self.status) = (limit, cursor, status)
    }

    /// The page (at most `limit` orders) and the cursor of the next one.
    func run(_ database: Database, context: OperationContext) async throws -> (items: ArraySlice<Order>, nextCursor: String?) {
        let limit = try pageLimit(limit)
        let orders = try await database.read(
            ListOrders(status: try ListQuery.status(status, as: Order.Status.self), before: try Cursor.timeAndID(cursor), limit: limit + 1),
            context: context)
        return keysetPage(orders, limit: limit) { Cursor.timeAndID($0.createdAt, $0.id) }
    }
}

/// Writes an orders page as JSON by hand: the same bytes the generated encoder writes (keys
/// sorted, absent values omitted), a test holds the two to byte equality.
enum OrderListJSON {
    static func page(_ items: ArraySlice<Order>, nextCursor: String?) -> ByteBuffer {
        JSONBytes.page(items, nextCursor: nextCursor, bytesPerItem: 520, write)
    }

    private static func write(_ o: Order, into out: inout JSONBytes) {
        out.raw("{")
        if let carrier = o.carrier {
            out.raw("\"carrier\":")
            out.string(carrier)
            out.raw(",")
        }
        out.raw("\"created_at\":")
        out.date(o.createdAt)
        out.raw(",\"id\":")
        out.uuid(o.id)
        out.raw(",\"line_count\":")
        out.integer(Int64(o.lineCount))
        let address = o.shipping.address
        out.raw(",\"shipping\":{\"address\":{\"city\":")
        out.string(address.city)
        out.raw(",\"country\":")
        out.string(address.country)
        out.raw(",\"line1\":")
        out.string(address.line1)
        if let line2 = address.line2 {
            out.raw(",\"line2\":")
            out.string(line2)
        }
        out.raw(",\"postal_code\":")
        out.string(address.postalCode)
        out.raw(",\"region\":")
        out.string(address.region)
        out.raw("},\"name\":")
        out.string(o.shipping.name)
        out.raw("},\"status\":")
        out.string(o.status.rawValue)
        if let reason = o.statusReason {
            out.raw(",\"status_reason\":")
            out.string(reason)
        }
        out.raw(",\"tenant_id\":")
        out.uuid(o.tenantID)
        out.raw(",\"total_cents\":")
        out.integer(o.totalCents)
        out.raw(",\"total_fitpoints\":")
        out.integer(o.totalFitPoints)
        if let tracking = o.trackingNumber {
            out.raw(",\"tracking_number\":")
            out.string(tracking)
        }
        out.raw(",\"updated_at\":")
        out.date(o.updatedAt)
        out.raw(",\"version\":")
        out.integer(o.version)
        out.raw("}")
    }
}
