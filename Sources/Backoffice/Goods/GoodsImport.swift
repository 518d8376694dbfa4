import BackofficePlatform
import Crypto
import Foundation
import PostgresNIO

/// A partner imports goods from a CSV or JSONL file (`goods.import`): each row creates the good
/// with its sku or replaces the fields of the one it names (an archived good is refused; a row
/// without `status` keeps an existing good's and makes a new one a draft). Rows with errors are
/// reported by line and skipped; with `allOrNothing` any error refuses the whole file (422, the
/// errors listed, nothing changed). `dryRun` reports the same and changes nothing. One audit
/// event records the import (its counts and the file's SHA-256).
package struct ImportGoods: AuditedOperation {
    package static let action: Action = "goods.import"
    let contents: RecordFileContents<GoodRow>
    let format: RecordFileFormat
    let allOrNothing: Bool
    let dryRun: Bool
    /// The file's SHA-256 (hex): audited, and what an Idempotency-Key is fingerprinted with.
    package var sha256: String { contents.sha256 }

    /// `contents` as `GoodsFileReader` read them (before the transaction: the file is read as it arrives).
    package init(contents: RecordFileContents<GoodRow>, format: RecordFileFormat, allOrNothing: Bool, dryRun: Bool) {
        (self.contents, self.format, self.allOrNothing, self.dryRun) = (contents, format, allOrNothing, dryRun)
    }

    /// A file that cannot be read at all, as the import refuses it (422 `malformed_file`).
    package static func refusal(_ error: MalformedFile, format: RecordFileFormat) -> DomainError {
        error.refusal("The \(format.rawValue) file")
    }

    /// Rows written per statement.
    static let chunk = 2_000

    package func perform(in unit: UnitOfWork) async throws -> Audited<ImportReport> {
        let tenant = unit.principal.tenantID
        guard tenant != platformTenantID else {
            throw DomainError.invalid(
                "tenant", "not_a_partner", "goods belong to a partner's tenant; use a partner's token")
        }
        var (rows, issues) = (contents.rows, contents.issues)
        // The goods the file names that exist, locked: whether each row creates or updates, and
        // the archived goods it may not change.
        var existing: [String: Good.Status] = [:]
        for part in stride(from: 0, to: rows.count, by: 10_000) {
            let skus = rows[part..<min(rows.count, part + 10_000)].map(\.sku)
            for (sku, status) in try await unit.all(
                """
                SELECT sku, status FROM goods WHERE tenant_id = \(tenant) AND sku = ANY(\(skus)::text[]) ORDER BY \
                id FOR UPDATE
                """,
                { try $0.decode((String, String).self) })
            {
                existing[sku] = try Good.Status(known: status)
            }
        }
        rows.removeAll { row in
            guard existing[row.sku] == .archived else { return false }
            issues.append(
                RowIssue(
                    line: row.line, key: row.sku, field: "sku", code: "archived",
                    message: "an archived good cannot change"))
            return true
        }
        issues.sort { $0.line < $1.line }
        try ImportReport.checkAllOrNothing(allOrNothing, issues)
        let created = rows.filter { existing[$0.sku] == nil }.count
        let report = ImportReport(
            dryRun: dryRun, allOrNothing: allOrNothing, rows: rows.count + RowIssue.lines(issues), created: created,
            updated: rows.count - created, issues: issues)
        guard !dryRun, !rows.isEmpty else { return .unchanged(report) }
        for part in stride(from: 0, to: rows.count, by: Self.chunk) {
            try await write(
                rows[part..<min(rows.count, part + Self.chunk)], existing: existing, tenant: tenant, in: unit)
        }
        struct Snapshot: Encodable {
            let format: String, rows: Int, created: Int, updated: Int, rejected: Int, sha256: String
        }
        return Audited(
            report,
            event: AuditRecord(
                action: Self.action, tenantID: tenant, targetType: "goods", targetID: "import", reason: nil,
                before: nil,
                after: try AuditRecord.json(
                    Snapshot(
                        format: format.rawValue, rows: report.rows, created: report.created, updated: report.updated,
                        rejected: report.rejected,
                        sha256: sha256))))
    }

    /// Creates or replaces one chunk of goods in one statement.
    private func write(_ rows: ArraySlice<GoodRow>, existing: [String: Good.Status], tenant: UUID, in unit: UnitOfWork)
        async throws
    {
        let statuses = rows.map { ($0.status ?? existing[$0.sku] ?? .draft).rawValue }
        try await unit.execute(
            """
            INSERT INTO goods (tenant_id, id, sku, name, description, category, price_cents, price_fitpoints, stock,
                status, image_urls, created_at, updated_at)
            SELECT \(tenant), r.id, r.sku, r.name, r.description, r.category, NULLIF(r.cents, 0), NULLIF(r.points, 0),
                r.stock, r.status,
                CASE WHEN r.images = '' THEN '{}'::text[] ELSE string_to_array(r.images, ' ') END, \(unit.now),
                    \(unit.now)
            FROM unnest(\(rows.map { _ in unit.newID() })::uuid[], \(rows.map(\.sku))::text[],
                \(rows.map(\.fields.name))::text[],
                \(rows.map(\.fields.description))::text[], \(rows.map(\.fields.category))::text[],
                    \(rows.map { $0.fields.priceCents ?? 0 })::int8[],
                \(rows.map { $0.fields.priceFitPoints ?? 0 })::int8[], \(rows.map { Int32($0.fields.stock) })::int4[],
                    \(statuses)::text[],
                \(rows.map { $0.fields.imageURLs.joined(separator: " ") })::text[])
                AS r(id, sku, name, description, category, cents, points, stock, status, images)
            ON CONFLICT (tenant_id, sku) DO UPDATE SET
                name = excluded.name, description = excluded.description, category = excluded.category, price_cents =
                    excluded.price_cents,
                price_fitpoints = excluded.price_fitpoints, stock = excluded.stock, status = excluded.status,
                    image_urls = excluded.image_urls,
                updated_at = excluded.updated_at, version = goods.version + 1
            WHERE goods.status <> 'archived'
            """)
    }
}

/// A partner's goods as a file, page by page (`goods.export`): 1,000 goods at a time by sku
/// (`ExportPages` reads the next page as the client takes the last), so an export of any size
/// never sits in memory. Each page is its own read: goods changed during a long export appear as
/// they were when their page was read.
package struct ExportGoods: Query {
    package static let action: Action = "goods.export"
    let status: Good.Status?
    var category: String? = nil
    let after: Position?
    package static let pageSize = 1_000

    /// Where a page ends: its last good's sku and id.
    package typealias Position = (sku: String, id: UUID)

    package func read(in unit: UnitOfWork) async throws -> [Good] {
        try await ListGoods(status: status, category: category, after: after, limit: Self.pageSize).read(in: unit)
    }

    /// Where the page after `page` starts; nil when `page` is the last.
    package static func position(after page: [Good]) -> Position? {
        guard page.count == pageSize, let last = page.last else { return nil }
        return (last.sku, last.id)
    }

    /// The whole file as pages: the header and `first` (read in the request, so a refusal
    /// answers before any byte), then each following page as the reader takes it, read again as
    /// the request's principal (the API's export and the console's download).
    package static func pages(
        first: [Good], status: Good.Status?, category: String? = nil, format: RecordFileFormat, database: Database,
        context: OperationContext
    ) throws -> ExportPages<Position> {
        ExportPages(
            database: database, context: context, start: header(format) + (try encode(first, as: format)),
            after: position(after: first)
        ) {
            after, context in
            let page = try await database.read(
                ExportGoods(status: status, category: category, after: after), context: context)
            return (try encode(page, as: format), position(after: page))
        }
    }

    /// The file's header (CSV) or nothing (JSONL).
    package static func header(_ format: RecordFileFormat) -> [UInt8] {
        format == .csv ? csvLine(GoodsFile.columns) : []
    }

    /// Goods written as `format`: CSV (`SafeText.csvCell`: RFC 4180 quoting, and a cell a
    /// spreadsheet would run as a formula neutralised, as the CLI writes CSV), or one JSON object
    /// per line. Each row ends with a line break, so pages can follow each other.
    package static func encode(_ goods: [Good], as format: RecordFileFormat) throws -> [UInt8] {
        switch format {
        case .csv:
            return goods.flatMap { good in
                csvLine([
                    good.sku, good.name, good.description, good.category, good.priceCents.map(String.init) ?? "",
                    good.priceFitPoints.map(String.init) ?? "", String(good.stock), good.status.rawValue,
                    good.imageURLs.joined(separator: " "),
                ])
            }
        case .jsonl:
            struct Line: Encodable {
                let sku: String, name: String, description: String, category: String, price_cents: Int64?,
                    price_fitpoints: Int64?
                let stock: Int64, status: String, image_urls: [String]
            }
            let encoder = JSONEncoder()  // one for the page
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var out: [UInt8] = []
            for good in goods {
                let line = Line(
                    sku: good.sku, name: good.name, description: good.description, category: good.category,
                    price_cents: good.priceCents,
                    price_fitpoints: good.priceFitPoints, stock: good.stock, status: good.status.rawValue,
                    image_urls: good.imageURLs)
                out += try encoder.encode(line)
                out.append(0x0A)
            }
            return out
        }
    }

    /// One CSV line, ending with a line break.
    private static func csvLine(_ cells: [String]) -> [UInt8] {
        Array((cells.map(SafeText.csvCell).joined(separator: ",") + "\n").utf8)
    }
}
