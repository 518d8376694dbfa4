import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Food files in Open Food Facts' columns: a check (nothing changes; each refused line listed
    /// with why), an import (the foods in review as one import), and an import's page, where a
    /// manager who did not make it approves it whole.
    func registerFoodImports(on group: RouterGroup<AppRequestContext>) {
        get("foods/import", on: group) { console in
            try console.context.permit(ImportFoods.self)
            return console.foodImportPage()
        }
        post("foods/import", on: group) { console in
            guard let file = console.form.files["file"], !file.bytes.isEmpty else {
                let issue = FieldIssue(field: "file", code: "required", message: "choose a CSV file")
                return console.foodImportPage(issues: [issue])
            }
            let dryRun = console.form["intent"] != "import"
            return try await console.submit {
                var reader = FoodsFileReader(format: .csv)
                let contents: RecordFileContents<FoodRow>
                do {
                    try reader.feed(file.bytes)
                    contents = try reader.finish()
                } catch let error as MalformedFile {
                    throw ImportFoods.refusal(error)
                }
                let made = try await console.run(
                    ImportFoods(
                        contents: contents, allOrNothing: console.form["all_or_nothing"] == "yes", dryRun: dryRun))
                guard let id = made.id else { return console.foodImportPage(report: made.report, file: file.fileName) }
                return console.redirect(
                    "/console/food-imports/\(id.text)", flash: "Imported: \(made.report.created) foods wait for review."
                )
            } refused: { issues in
                console.foodImportPage(issues: issues)
            }
        }
        get("food-imports/{id}", on: group) { console in
            try await console.foodImportSummary(try console.routeID())
        }
        post("food-imports/{id}/approve", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                let approved = try await console.run(ApproveFoodImport(importID: id))
                return console.redirect(
                    "/console/food-imports/\(id.text)", flash: "Approved: \(approved) foods are live in the app.")
            } refused: { issues in
                try await console.foodImportSummary(id, issues: issues)
            }
        }
    }
}

extension ConsoleRequest {
    /// The upload form; after a check, its report (the first 500 refused lines).
    fileprivate func foodImportPage(
        report: ImportReport? = nil, file: String? = nil, issues: [FieldIssue] = []
    ) -> ConsoleAnswer {
        var data: [String: Any] = ["columns": FoodsFile.columns.joined(separator: ", ")]
        if let report {
            let more: Int? = report.issues.count > 500 ? report.issues.count - 500 : nil
            data["report"] = [
                "file": file ?? "", "rows": report.rows, "accepted": report.created, "rejected": report.rejected,
                "issues": report.issues.prefix(500).map {
                    ["line": $0.line, "gtin": $0.key ?? "", "field": $0.field, "message": $0.message]
                },
                "hasIssues": !report.issues.isEmpty, "more": more as Any,
            ]
        }
        FormRefusal(issues).add(to: &data)
        return page(
            "foods-import", title: "Import foods", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// An import's page: who made it, how many foods still wait, and approval for a manager who
    /// did not make it.
    fileprivate func foodImportSummary(_ id: UUID, issues: [FieldIssue] = []) async throws -> ConsoleAnswer {
        let summary = try await read(FoodImportSummary(id: id))
        var data: [String: Any] = [
            "id": id.text, "foods": summary.foods, "waiting": summary.waiting, "importedBy": summary.importedBy,
            "importedAt": ConsoleTime.text(summary.importedAt),
            "canApprove": summary.approvedAt == nil && summary.importerID != principal.operatorID
                && may(ApproveFoodImport.action),
            "ownImport": summary.approvedAt == nil && summary.importerID == principal.operatorID,
        ]
        if let at = summary.approvedAt {
            data["approved"] = ["by": summary.approvedBy ?? "a former operator", "at": ConsoleTime.text(at)]
        }
        FormRefusal(issues).add(to: &data)
        return page(
            "food-import", title: "Food import", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// What an import of foods is: its count, who made it and when, how many of its foods still
/// wait in review, and its approval (`foods.list`).
struct FoodImportSummary: Query {
    static let action: Action = "foods.list"
    let id: UUID

    struct Summary {
        let foods: Int, waiting: Int, importerID: UUID, importedBy: String, importedAt: Date
        let approvedBy: String?, approvedAt: Date?
    }

    func read(in unit: UnitOfWork) async throws -> Summary {
        let summary = try await unit.first(
            """
            SELECT i.foods, (SELECT count(*) FROM foods f WHERE f.import_id = i.id AND f.state = 'in_review')::int,
                i.imported_by, o.email, i.imported_at, a.email, i.approved_at
            FROM food_imports i JOIN operators o ON o.id = i.imported_by
            LEFT JOIN operators a ON a.id = i.approved_by
            WHERE i.id = \(id)
            """
        ) { row in
            let c = try row.decode((Int, Int, UUID, String, Date, String?, Date?).self)
            return Summary(
                foods: c.0, waiting: c.1, importerID: c.2, importedBy: c.3, importedAt: c.4, approvedBy: c.5,
                approvedAt: c.6)
        }
        guard let summary else { throw DomainError.notFound("Food import \(id.text)") }
        return summary
    }
}
