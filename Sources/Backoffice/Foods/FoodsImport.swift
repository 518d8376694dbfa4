import BackofficePlatform
import Foundation
import PostgresNIO

/// What a food import did (or, in a dry run, would do).
package struct FoodImport: Sendable {
    /// The import's id (nil in a dry run, or when no row was imported): what a manager approves.
    package var id: UUID?
    package var report: ImportReport
}

/// An expert or a manager adds foods from a file in Open Food Facts' columns (`foods.import`):
/// each row a new food, in review as one import, which a manager who did not import it approves
/// whole (`ApproveFoodImport`) or food by food. A barcode a food not archived already has is
/// refused on its line (`barcode_taken`: the database changes a food through its own review).
/// Rows with errors are reported by line and skipped; with `allOrNothing` any error refuses the
/// whole file (422, the errors listed, nothing changed). `dryRun` reports the same and changes
/// nothing. One audit event records the import (its counts and the file's SHA-256).
package struct ImportFoods: AuditedOperation {
    package static let action: Action = "foods.import"
    let contents: RecordFileContents<FoodRow>
    let allOrNothing: Bool
    let dryRun: Bool
    /// The file's SHA-256 (hex): audited, and what an Idempotency-Key is fingerprinted with.
    package var sha256: String { contents.sha256 }

    /// `contents` as `FoodsFileReader` read them (before the transaction: the file is read as it arrives).
    package init(contents: RecordFileContents<FoodRow>, allOrNothing: Bool, dryRun: Bool) {
        (self.contents, self.allOrNothing, self.dryRun) = (contents, allOrNothing, dryRun)
    }

    /// A file that cannot be read at all, as the import refuses it (422 `malformed_file`).
    package static func refusal(_ error: MalformedFile) -> DomainError { error.refusal("The foods file") }

    /// Rows written per statement.
    static let chunk = 5_000

    package func perform(in unit: UnitOfWork) async throws -> Audited<FoodImport> {
        var (rows, issues) = (contents.rows, contents.issues)
        var taken = Set<String>()
        for part in stride(from: 0, to: rows.count, by: 10_000) {
            let digits = rows[part..<min(rows.count, part + 10_000)].map(\.gtin.digits)
            taken.formUnion(
                try await unit.all(
                    "SELECT gtin FROM foods WHERE gtin = ANY(\(digits)::text[]) AND state <> 'archived'",
                    { try $0.decode(String.self) }))
        }
        rows.removeAll { row in
            guard taken.contains(row.gtin.digits) else { return false }
            issues.append(
                RowIssue(
                    line: row.line, key: row.gtin.description, field: "code", code: "barcode_taken",
                    message: "a food with this barcode exists"))
            return true
        }
        issues.sort { $0.line < $1.line }
        try ImportReport.checkAllOrNothing(allOrNothing, issues)
        let report = ImportReport(
            dryRun: dryRun, allOrNothing: allOrNothing, rows: rows.count + RowIssue.lines(issues),
            created: rows.count, updated: 0, issues: issues)
        guard !dryRun, !rows.isEmpty else { return .unchanged(FoodImport(id: nil, report: report)) }
        let id = unit.newID()
        try await unit.execute(
            """
            INSERT INTO food_imports (id, sha256, foods, imported_by, imported_at)
            VALUES (\(id), \(sha256), \(rows.count), \(unit.principal.operatorID), \(unit.now))
            """)
        for part in stride(from: 0, to: rows.count, by: Self.chunk) {
            try await write(rows[part..<min(rows.count, part + Self.chunk)], of: id, in: unit)
        }
        struct Snapshot: Encodable { let rows: Int, created: Int, rejected: Int, sha256: String }
        return Audited(
            FoodImport(id: id, report: report),
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "food_import", targetID: id.text,
                reason: nil, before: nil,
                after: try AuditRecord.json(
                    Snapshot(rows: report.rows, created: report.created, rejected: report.rejected, sha256: sha256))))
    }

    /// Adds one chunk of foods, in review, and their first versions: two statements.
    private func write(_ rows: ArraySlice<FoodRow>, of importID: UUID, in unit: UnitOfWork) async throws {
        let ids = rows.map { _ in unit.newID() }
        let (who, now) = (unit.principal.operatorID, unit.now)
        try await unit.execute(
            """
            INSERT INTO foods (id, gtin, author_id, import_id, state, version, submitted_at, created_at, updated_at,
                updated_by)
            SELECT r.id, r.gtin, \(who), \(importID), 'in_review', 1, \(now), \(now), \(now), \(who)
            FROM unnest(\(ids)::uuid[], \(rows.map(\.gtin.digits))::text[]) AS r(id, gtin)
            """)
        let facts = rows.map(\.facts)
        // Arrays of numbers carry no NULL: an unknown figure goes as -1 (every figure is at least 0).
        func grams(_ figure: KeyPath<FoodFacts, Double?>) -> [Double] { facts.map { $0[keyPath: figure] ?? -1 } }
        try await unit.execute(
            """
            INSERT INTO food_versions (food_id, version, name, brand, serving_grams, energy_kcal, fat, saturated_fat,
                carbohydrates, sugars, fiber, proteins, salt, allergens, written_by, written_at)
            SELECT r.id, 1, r.name, NULLIF(r.brand, ''), NULLIF(r.serving, -1), r.energy, NULLIF(r.fat, -1),
                NULLIF(r.saturated, -1), NULLIF(r.carbohydrates, -1), NULLIF(r.sugars, -1), NULLIF(r.fiber, -1),
                NULLIF(r.proteins, -1), NULLIF(r.salt, -1),
                CASE WHEN r.allergens = '' THEN '{}'::text[] ELSE string_to_array(r.allergens, ',') END, \(who), \(now)
            FROM unnest(\(ids)::uuid[], \(facts.map(\.name))::text[], \(facts.map { $0.brand ?? "" })::text[],
                \(grams(\.servingGrams))::float8[], \(facts.map(\.energyKcal))::float8[], \(grams(\.fat))::float8[],
                \(grams(\.saturatedFat))::float8[], \(grams(\.carbohydrates))::float8[], \(grams(\.sugars))::float8[],
                \(grams(\.fiber))::float8[], \(grams(\.proteins))::float8[], \(grams(\.salt))::float8[],
                \(facts.map { $0.allergens.map(\.rawValue).joined(separator: ",") })::text[])
                AS r(id, name, brand, serving, energy, fat, saturated, carbohydrates, sugars, fiber, proteins, salt,
                    allergens)
            """)
    }
}

/// A manager approves a whole import (`foods.approve`): every food of it still in review goes
/// live, in one statement, except those with a version the approver wrote (403 `own_version`
/// when the approver made the import: a second person reads what goes live). An import
/// approved already is 409. One audit event records how many went live.
package struct ApproveFoodImport: AuditedOperation {
    package static let action: Action = "foods.approve"
    let importID: UUID

    package init(importID: UUID) { self.importID = importID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        guard
            let (importer, approvedAt) = try await unit.first(
                "SELECT imported_by, approved_at FROM food_imports WHERE id = \(importID) FOR UPDATE",
                { try $0.decode((UUID, Date?).self) })
        else { throw DomainError.notFound("Food import \(importID.text)") }
        let approver = unit.principal.operatorID
        guard importer != approver else {
            throw DomainError.forbiddenTarget(
                Self.action, code: "own_version", detail: "An import is approved by someone who did not make it.")
        }
        guard approvedAt == nil else {
            throw DomainError.invalidTransition("This import is approved already.", current: "approved")
        }
        let now = unit.now
        let approved =
            try await unit.first(
                """
                WITH live AS (
                    UPDATE foods f SET state = 'published', live_version = version, live_at = \(now),
                        first_published_at = coalesce(first_published_at, \(now)), review_comment = NULL,
                        reviewed_by = \(approver), reviewed_at = \(now), updated_at = \(now), updated_by = \(approver)
                    WHERE import_id = \(importID) AND state = 'in_review'
                      AND NOT EXISTS (SELECT 1 FROM food_versions v WHERE v.food_id = f.id
                          AND v.version > coalesce(f.live_version, 0) AND v.written_by = \(approver))
                    RETURNING 1)
                SELECT count(*) FROM live
                """, { try $0.decode(Int.self) }) ?? 0
        try await unit.execute(
            "UPDATE food_imports SET approved_by = \(approver), approved_at = \(now) WHERE id = \(importID)")
        struct Snapshot: Encodable { let approved: Int }
        return Audited(
            approved,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "food_import", targetID: importID.text,
                reason: nil, before: nil, after: try AuditRecord.json(Snapshot(approved: approved))))
    }
}
