import BackofficeAPI
import BackofficePlatform
import Foundation
import PostgresNIO

/// The caller's orders (every shop's for a platform role), newest first, with the list's filters,
/// a thousand at a time (`orders.export`): any number of orders, one page in memory. Personal data
/// is masked for roles that see it masked, as the list masks it; no customer id, as on every
/// order a shop reads.
package struct ExportOrders: Query {
    package static let action: Action = "orders.export"
    package static let pageSize = 1_000
    let status: Order.Status?
    let filter: OrderFilter
    let before: Position?

    /// Where a page ends: its last order's placing time and id.
    package typealias Position = (Date, UUID)

    package init(status: Order.Status?, filter: OrderFilter, before: Position?) {
        (self.status, self.filter, self.before) = (status, filter, before)
    }

    package func read(in unit: UnitOfWork) async throws -> [Order] {
        let tenant = unit.tenantScope
        try filter.check(tenant: tenant)
        let start = before ?? (Date.distantFuture, platformTenantID)
        let masks = unit.context.masksPII
        return try await unit.all(filter.page(tenant: tenant, status: status, before: start, limit: Self.pageSize)) {
            masks ? try Order(row: $0).masked : try Order(row: $0)
        }
    }

    /// Where the page after `page` starts; nil when `page` is the last.
    static func position(after page: [Order]) -> Position? {
        guard page.count == pageSize, let last = page.last else { return nil }
        return (last.createdAt, last.id)
    }

    /// The whole file: the header and `first` (read in the request, so a refusal answers before any
    /// byte), then each following page as the reader takes it, read again as the request's principal.
    package static func pages(
        first: [Order], status: Order.Status?, filter: OrderFilter, format: RecordFileFormat, database: Database,
        context: OperationContext
    ) throws -> ExportPages<Position> {
        ExportPages(
            database: database, context: context,
            start: OrderFile.header(format) + (try OrderFile.encode(first, format)),
            after: position(after: first)
        ) { before, context in
            let page = try await database.read(
                ExportOrders(status: status, filter: filter, before: before), context: context)
            return (try OrderFile.encode(page, format), position(after: page))
        }
    }
}

/// Orders as an export writes them: CSV (`SafeText.csvCell`: RFC 4180 quoting, and a cell a
/// spreadsheet would run as a formula — `=`, `+`, `-`, `@` first — neutralised) or JSON Lines.
enum OrderFile {
    static let columns = [
        "id", "placed_at", "status", "total_cents", "total_fitpoints", "line_count", "ship_to_name", "city", "region",
        "country", "carrier", "tracking_number",
    ]

    static func header(_ format: RecordFileFormat) -> [UInt8] {
        format == .csv ? Array((columns.joined(separator: ",") + "\n").utf8) : []
    }

    static func encode(_ orders: [Order], _ format: RecordFileFormat) throws -> [UInt8] {
        switch format {
        case .csv:
            return orders.flatMap { order in
                let cells = [
                    order.id.text, RFC3339DateTranscoder.format(order.createdAt), order.status.rawValue,
                    String(order.totalCents), String(order.totalFitPoints), String(order.lineCount),
                    order.shipping.name, order.shipping.address.city, order.shipping.address.region,
                    order.shipping.address.country, order.carrier ?? "", order.trackingNumber ?? "",
                ]
                return Array((cells.map(SafeText.csvCell).joined(separator: ",") + "\n").utf8)
            }
        case .jsonl:
            struct Line: Encodable {
                let id: String, placed_at: String, status: String, total_cents: Int64, total_fitpoints: Int64
                let line_count: Int, ship_to_name: String, city: String, region: String, country: String
                let carrier: String?, tracking_number: String?
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var out: [UInt8] = []
            for order in orders {
                let address = order.shipping.address
                out += try encoder.encode(
                    Line(
                        id: order.id.text, placed_at: RFC3339DateTranscoder.format(order.createdAt),
                        status: order.status.rawValue, total_cents: order.totalCents,
                        total_fitpoints: order.totalFitPoints, line_count: order.lineCount,
                        ship_to_name: order.shipping.name, city: address.city, region: address.region,
                        country: address.country, carrier: order.carrier, tracking_number: order.trackingNumber))
                out.append(0x0A)
            }
            return out
        }
    }
}
