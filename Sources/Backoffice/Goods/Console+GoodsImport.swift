import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird
import NIOCore

extension Console {
    /// A shop's goods files: import (upload, a dry run listing each refused line, then apply) and
    /// export (a download of every good, page by page as it is sent).
    func registerGoodsFiles(on group: RouterGroup<AppRequestContext>) {
        get("goods/import", on: group) { console in
            try console.context.permit(ImportGoods.self)
            return console.page(
                "goods-import", title: "Import goods", ["columns": GoodsFile.columns.joined(separator: ", ")])
        }
        post("goods/import", on: group) { console in
            guard let file = console.form.files["file"], !file.bytes.isEmpty else {
                let refusal = FormRefusal([
                    FieldIssue(field: "file", code: "required", message: "choose a CSV or JSON Lines file")
                ])
                var data: [String: Any] = ["columns": GoodsFile.columns.joined(separator: ", ")]
                refusal.add(to: &data)
                return console.page("goods-import", title: "Import goods", status: .unprocessableContent, data)
            }
            let format: RecordFileFormat =
                console.form["format"].flatMap(RecordFileFormat.init(rawValue:))
                ?? (file.fileName.lowercased().hasSuffix(".jsonl") || file.fileName.lowercased().hasSuffix(".ndjson")
                    ? .jsonl : .csv)
            return try await console.submit {
                let id = try await console.run(
                    StageGoodsImport(bytes: file.bytes, fileName: file.fileName, format: format))
                return console.redirect("/console/goods/import/\(id.text)")
            } refused: { issues in
                var data: [String: Any] = ["columns": GoodsFile.columns.joined(separator: ", ")]
                FormRefusal(issues).add(to: &data)
                return console.page("goods-import", title: "Import goods", status: .unprocessableContent, data)
            }
        }
        get("goods/import/{id}", on: group) { console in
            let staged = try await console.read(GetStagedImport(id: try console.routeID()))
            let report = staged.report
            var data: [String: Any] = [
                "id": staged.id.text, "fileName": staged.fileName, "format": staged.format.rawValue,
                "rows": report.rows,
                "created": report.created, "updated": report.updated, "rejected": report.rejected,
                "issues": report.issues,
                "hasIssues": !report.issues.isEmpty, "expires": ConsoleTime.text(staged.expiresAt),
            ]
            if report.created + report.updated > 0 { data["canApply"] = true }
            if report.rejected > report.issues.count { data["moreIssues"] = report.rejected - report.issues.count }
            return console.page("goods-import-report", title: "Check \(staged.fileName)", data)
        }
        post("goods/import/{id}/apply", on: group) { console in
            let report = try await console.run(ApplyStagedImport(id: try console.routeID()))
            let skipped = report.rejected > 0 ? "; \(report.rejected) rows with errors were skipped" : ""
            return console.redirect(
                "/console/goods", flash: "Imported: \(report.created) created, \(report.updated) updated\(skipped).")
        }
        get("goods/export", on: group, holdsTransaction: false) { console in
            let format: RecordFileFormat = console.form["format"] == "jsonl" ? .jsonl : .csv
            let status = try GoodForm.status(console.form.text("status"))
            let first = try await console.read(ExportGoods(status: status, after: nil))
            let pages = try ExportGoods.pages(
                first: first, status: status, format: format, database: database, context: console.context)
            return .download(
                name: "goods.\(format.rawValue)",
                contentType: format == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson",
                pages: pages)
        }
    }
}
