import BackofficeAPI
import BackofficeConsole
import BackofficePlatform
import Foundation
import NIOCore
import PostgresNIO

/// One request for a page of a partner's orders, however it arrived (generated handler or the
/// hand-encoded fast path): validated once, run once.
struct OrderListRequest: Sendable {
    var limit: Int?
    var cursor: String?
    var status: String?
    /// Only the orders placed on this UTC day (the console's link from a chart's day).
    var day: UTCDay?
    var filter = OrderFilter()

    /// Reads the query string of `GET /v1/orders`.
    init(query: String?) throws {
        var filter = OrderFilter()
        let list = try ListQuery(query) { name, value in _ = try filter.read(name, value) }
        self.init(limit: list.limit, cursor: list.cursor, status: list.status, filter: filter)
    }

    init(limit: Int?, cursor: String?, status: String?, day: UTCDay? = nil, filter: OrderFilter = OrderFilter()) {
        (self.limit, self.cursor, self.status, self.day, self.filter) = (limit, cursor, status, day, filter)
    }

    /// The page (at most `limit` orders) and the cursor of the next one.
    func run(_ database: Database, context: OperationContext) async throws -> (
        items: ArraySlice<Order>, nextCursor: String?
    ) {
        let limit = try pageLimit(limit)
        var orders = try await database.read(try query(limit: limit + 1), context: context)
        if let start = day?.start { orders = orders.filter { $0.createdAt >= start } }
        return keysetPage(orders, limit: limit) { Cursor.timeAndID($0.createdAt, $0.id) }
    }

    /// The page as the contract's JSON, written straight from the rows (`OrderPageJSON`).
    func json(_ database: Database, context: OperationContext) async throws -> ByteBuffer {
        let limit = try pageLimit(limit)
        return try await database.read(
            ListOrdersJSON(rows: try query(limit: limit + 1), limit: limit), context: context)
    }

    private func query(limit: Int) throws -> ListOrders {
        ListOrders(
            status: try ListQuery.status(status, as: Order.Status.self),
            before: try Cursor.timeAndID(cursor) ?? day.map { ($0.advanced(by: 1).start, ConsoleLinks.firstID) },
            limit: limit, filter: filter)
    }
}

/// `ListOrders` answered as the contract's JSON (`orders.list`, the same policy action): the
/// rows go into the page as they arrive.
struct ListOrdersJSON: Query {
    static let action = ListOrders.action
    /// The page's rows and one more, which tells whether another page follows.
    let rows: ListOrders
    let limit: Int

    func read(in unit: UnitOfWork) async throws -> ByteBuffer {
        var page = OrderPageJSON(limit: limit, masked: unit.context.masksPII)
        try await rows.eachRow(in: unit) { try page.add($0) }
        return try page.finish()
    }
}

/// Writes a page of orders as JSON straight from rows of `Order.columns`, without building
/// `Order` values: text is copied from the row's bytes (escaped), numbers and times are decoded
/// on the way. The bytes are the generated encoder's (keys sorted, absent values omitted); a
/// test holds the two to byte equality.
struct OrderPageJSON {
    private var out: JSONBytes
    /// The current row's cells, by position in `Order.columns` (the storage is reused).
    private var cells: [PostgresCell] = []
    private let limit: Int
    private var written = 0
    /// The last written row's `created_at` and `id`: the next page's cursor.
    private var last: (createdAt: PostgresCell, id: PostgresCell)?
    private var hasMore = false
    /// Whether the personal fields are written masked (`PIIMask`, as `Order.masked` does).
    private let masked: Bool

    init(limit: Int, masked: Bool = false) {
        self.limit = limit
        self.masked = masked
        out = JSONBytes(capacity: limit * 520 + 64)
        out.openPage()
        cells.reserveCapacity(20)
    }

    /// Adds `row` to the page, or, past `limit` rows, notes that another page follows.
    /// - Throws: `DomainError.inconsistent` when the row is not one of `Order.columns`.
    mutating func add(_ row: PostgresRow) throws {
        guard written < limit else {
            hasMore = true
            return
        }
        cells.removeAll(keepingCapacity: true)
        cells.append(contentsOf: row)
        guard cells.count == 20 else {
            throw DomainError.inconsistent("a row of orders has \(cells.count) columns, not 20")
        }
        out.raw(written == 0 ? "{" : ",{")
        written += 1
        if try optionalText(13, "carrier") { out.raw(",") }
        out.raw("\"created_at\":")
        out.date(try cells[17].decode(Date.self))
        out.raw(",\"id\":")
        try uuid(0)
        out.raw(",\"line_count\":")
        out.integer(Int64(try cells[16].decode(Int32.self)))
        try shipping()
        // an unknown state is 500, never passed on
        out.string(try Order.Status(known: try cells[3].decode(String.self)).rawValue)
        out.raw(",")
        if try optionalText(15, "status_reason") { out.raw(",") }
        out.raw("\"tenant_id\":")
        try uuid(1)
        out.raw(",\"total_cents\":")
        out.integer(try cells[4].decode(Int64.self))
        out.raw(",\"total_fitpoints\":")
        out.integer(try cells[5].decode(Int64.self))
        out.raw(",")
        if try optionalText(14, "tracking_number") { out.raw(",") }
        out.raw("\"updated_at\":")
        out.date(try cells[18].decode(Date.self))
        out.raw(",\"version\":")
        out.integer(try cells[19].decode(Int64.self))
        out.raw("}")
        last = (cells[17], cells[0])
    }

    /// `,"shipping":{…},"status":` for the current row: its address and name (masked when the page
    /// is), or the erased shape of a purged customer's order.
    private mutating func shipping() throws {
        if cells[7].bytes == nil {
            // A purged customer's order: its address is `{}` (`Order.Shipping.erasedShipping`).
            out.raw(
                """
                ,"shipping":{"address":{"city":"","country":"","line1":"","postal_code":"","region":""},\
                "erased":true,"name":"erased"},"status":
                """)
        } else {
            out.raw(",\"shipping\":{\"address\":{\"city\":")
            try text(9)
            out.raw(",\"country\":")
            try text(12)
            out.raw(",\"line1\":")
            try text(7, masking: PIIMask.text)
            out.raw(",")
            if try optionalText(8, "line2", masking: PIIMask.text) { out.raw(",") }
            out.raw("\"postal_code\":")
            try text(11, masking: PIIMask.text)
            out.raw(",\"region\":")
            try text(10)
            out.raw("},\"name\":")
            try text(6, masking: PIIMask.name)
            out.raw("},\"status\":")
        }
    }

    /// The page: its items and, when another page follows, the cursor after the last of them.
    consuming func finish() throws -> ByteBuffer {
        let after = hasMore ? last : nil
        out.closePage(
            nextCursor: try after.map {
                Cursor.encode(Cursor.timeAndID(try $0.createdAt.decode(Date.self), try $0.id.decode(UUID.self)))
            })
        return ByteBuffer(bytes: out.bytes)
    }

    /// The text cell at `index` as a JSON string (through `mask` when the page is masked).
    private mutating func text(_ index: Int, masking mask: ((String) -> String)? = nil) throws {
        guard let bytes = cells[index].bytes else {
            throw DomainError.inconsistent("orders.\(cells[index].columnName) is NULL")
        }
        write(bytes, masking: mask)
    }

    /// `"key":"value"` for the text cell at `index` unless it is NULL; whether it wrote it.
    private mutating func optionalText(_ index: Int, _ key: StaticString, masking mask: ((String) -> String)? = nil)
        throws -> Bool
    {
        guard let bytes = cells[index].bytes else { return false }
        out.raw("\"")
        out.raw(key)
        out.raw("\":")
        write(bytes, masking: mask)
        return true
    }

    private mutating func write(_ bytes: ByteBuffer, masking mask: ((String) -> String)?) {
        if masked, let mask {
            out.string(mask(String(buffer: bytes)))
        } else {
            bytes.withUnsafeReadableBytes { out.string(utf8: $0) }
        }
    }

    /// The uuid cell at `index` as a JSON string.
    private mutating func uuid(_ index: Int) throws {
        guard cells[index].dataType == .uuid, let bytes = cells[index].bytes, bytes.readableBytes == 16 else {
            throw DomainError.inconsistent("orders.\(cells[index].columnName) is not a uuid")
        }
        bytes.withUnsafeReadableBytes { out.uuid(bytes: $0) }
    }
}

extension HotList {
    /// `GET /v1/orders`, written by `OrderPageJSON`: its prepared pages planned once, a filtered
    /// page planned for its values (`OrderFilter.names`).
    static let orders = HotList(
        route: "/v1/orders", plansFor: { query in OrderFilter.filters(query) ? .auto : .generic }
    ) { _, query, database, context in
        HotPage(try await OrderListRequest(query: query).json(database, context: context))
    }
}
