import BackofficePlatform
import Foundation
import PostgresNIO

/// What a staged import's page shows: the dry run's report and the file it was made from.
package struct StagedImport: Sendable {
    package let id: UUID
    package let fileName: String
    package let format: RecordFileFormat
    package let report: StoredImportReport
    package let expiresAt: Date
}

/// An import report as it is stored with a staged file (the rows refused, at most 1,000 listed).
package struct StoredImportReport: Sendable, Codable {
    package struct Issue: Sendable, Codable {
        package let line: Int, sku: String?, field: String, code: String, message: String
    }
    package let rows: Int, created: Int, updated: Int, rejected: Int
    package let issues: [Issue]

    init(_ report: ImportReport) {
        (rows, created, updated, rejected) = (report.rows, report.created, report.updated, report.rejected)
        issues = report.issues.prefix(1_000).map {
            Issue(line: $0.line, sku: $0.key, field: $0.field, code: $0.code, message: $0.message)
        }
    }
}

/// Checks a goods file without importing it (`goods.import`, a dry run) and holds it for one hour
/// for the console session that uploaded it, so it can be applied without sending it again.
/// Audited as `goods.import` with the reason `dry_run`, its counts and the file's SHA-256. A
/// tenant holds at most `quotaFiles` staged files and `quotaBytes` at once (checked under a
/// per-tenant lock, so concurrent uploads cannot pass it together): past them, 422
/// `staged_quota_full`. Expired files are deleted here and by `maintenance purge`.
package struct StageGoodsImport: AuditedOperation {
    package static let action: Action = ImportGoods.action
    let bytes: [UInt8]
    let fileName: String
    let format: RecordFileFormat

    /// How long a staged file waits for its uploader.
    static let lifetime: TimeInterval = 3600
    /// The staged files and bytes one tenant may hold at once.
    static let quotaFiles = 5
    static let quotaBytes = 100 << 20

    package init(bytes: [UInt8], fileName: String, format: RecordFileFormat) {
        (self.bytes, self.fileName, self.format) = (bytes, String(fileName.prefix(255)), format)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<UUID> {
        guard let session = unit.principal.sessionID else {
            throw DomainError.inconsistent("a goods file is staged by a console session")
        }
        let contents = try GoodsFileReader.importable(bytes, format: format)
        let checked = try await ImportGoods(contents: contents, format: format, allOrNothing: false, dryRun: true)
            .perform(in: unit)
        let report = StoredImportReport(checked.output)
        let id = unit.newID()
        let tenant = unit.principal.tenantID
        try await unit.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('staged-goods-imports:' || \(tenant.text), 0))")
        try await unit.execute(
            "DELETE FROM staged_goods_imports WHERE tenant_id = \(tenant) AND expires_at < \(unit.now)")
        let held = try await unit.first(
            "SELECT count(*), coalesce(sum(length(contents)), 0) FROM staged_goods_imports WHERE tenant_id = \(tenant)"
        ) { try $0.decode((Int64, Int64).self) }
        if let (files, bytesHeld) = held, files >= Self.quotaFiles || Int(bytesHeld) + bytes.count > Self.quotaBytes {
            throw DomainError.unprocessable(
                code: "staged_quota_full",
                detail:
                    """
                    Your shop already holds \(files) checked files (\(Int(bytesHeld) >> 20) MiB) waiting to be \
                    applied; at most \(Self.quotaFiles) and \(Self.quotaBytes >> 20) MiB. Apply one, or wait for \
                    it to expire (an hour after its upload).
                    """,
                issues: [
                    FieldIssue(
                        field: "file", code: "staged_quota_full", message: "too many checked files wait to be applied")
                ])
        }
        try await unit.execute(
            """
            INSERT INTO staged_goods_imports (id, tenant_id, session_id, file_name, format, contents, sha256, report,
                created_at, expires_at)
            VALUES (\(id), \(unit.principal.tenantID), \(session), \(fileName), \(format.rawValue),
                \(ByteBuffer(bytes: bytes)),
                    \(contents.sha256), \(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))::jsonb,
                        \(unit.now),
                    \(unit.now.addingTimeInterval(Self.lifetime)))
            """)
        struct Snapshot: Encodable {
            let format: String, rows: Int, created: Int, updated: Int, rejected: Int, sha256: String, dry_run: Bool
        }
        let event = AuditRecord(
            action: Self.action, tenantID: unit.principal.tenantID, targetType: "goods", targetID: "import",
            reason: "dry_run", before: nil,
            after: try AuditRecord.json(
                Snapshot(
                    format: format.rawValue, rows: report.rows, created: report.created, updated: report.updated,
                    rejected: report.rejected,
                    sha256: contents.sha256, dry_run: true)))
        return Audited(id, event: event)
    }
}

/// A staged file of this session (`goods.import`); not found once applied, expired, or staged by
/// another session.
package struct GetStagedImport: Query {
    package static let action: Action = ImportGoods.action
    let id: UUID

    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> StagedImport {
        guard
            let row = try await unit.first(
                """
                SELECT file_name, format, report::text, expires_at FROM staged_goods_imports
                WHERE id = \(id) AND tenant_id = \(unit.principal.tenantID) AND session_id =
                    \(unit.principal.sessionID) AND expires_at > \(unit.now)
                """, { try $0.decode((String, String, String, Date).self) })
        else { throw DomainError.notFound("Staged import \(id.text)") }
        return StagedImport(
            id: id, fileName: row.0, format: try RecordFileFormat(known: row.1),
            report: try JSONDecoder().decode(StoredImportReport.self, from: Data(row.2.utf8)), expiresAt: row.3)
    }
}

/// Imports a staged file (`goods.import`, as `ImportGoods`: rows with errors skipped, one audit
/// event with its counts and SHA-256) and lets the staged copy go, in one transaction.
package struct ApplyStagedImport: AuditedOperation {
    package static let action: Action = ImportGoods.action
    let id: UUID

    package init(id: UUID) { self.id = id }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ImportReport> {
        guard
            let row = try await unit.first(
                """
                DELETE FROM staged_goods_imports
                WHERE id = \(id) AND tenant_id = \(unit.principal.tenantID) AND session_id =
                    \(unit.principal.sessionID) AND expires_at > \(unit.now)
                RETURNING format, contents
                """, { try $0.decode((String, ByteBuffer).self) })
        else { throw DomainError.notFound("Staged import \(id.text)") }
        let format = try RecordFileFormat(known: row.0)
        let contents = try GoodsFileReader.importable(Array(row.1.readableBytesView), format: format)
        return try await ImportGoods(contents: contents, format: format, allOrNothing: false, dryRun: false).perform(
            in: unit)
    }
}

extension GoodsFileReader {
    /// A whole file read at once for an import: one that cannot be read is the import's refusal
    /// (422 `malformed_file`).
    static func importable(_ bytes: [UInt8], format: RecordFileFormat) throws -> RecordFileContents<GoodRow> {
        do { return try read(bytes, format: format) } catch let error as MalformedFile {
            throw ImportGoods.refusal(error, format: format)
        }
    }
}
