import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console goods files: import with a dry run by line, then apply; export; search by name or SKU")
struct ConsoleGoodsImportTests {
    static let header = "sku,name,description,category,price_cents,price_fitpoints,stock,status,image_urls"

    @Test(
        """
        a CSV with one bad line: the check lists it by line and changes nothing; applying imports the good lines \
        and skips it; the staged file is no other session's; export downloads the goods
        """
    )
    func importWithADryRun() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let (email, password) = try await env.consolePassword(
                    for: try #require(env.fixture.partners[0].admin.operatorID))
                var admin = ConsoleClient(client)
                _ = try await admin.signIn(email, password)
                let form = try await admin.get("/console/goods/import")
                #expect(form.status == 200 && form.text.contains("enctype=\"multipart/form-data\""))
                let csv = [
                    Self.header, "IMP-1,Protein bar,,snacks,250,,10,active,", "IMP-2,,,snacks,abc,,5,,",
                    "IMP-3,Shaker,,gear,900,,3,draft,",
                ].joined(separator: "\n")
                let imports = try await env.auditCount("goods.import")
                let checked = try await admin.post(
                    "/console/goods/import", [:], file: ("file", "goods.csv", csv), csrf: form.csrf)
                #expect(checked.status == 303)
                let reportPath = try #require(checked.location)
                #expect(reportPath.hasPrefix("/console/goods/import/"))
                let report = try await admin.get(reportPath)
                #expect(report.status == 200)
                #expect(report.text.contains("3 rows (csv): 2 would be created, 0 updated, <strong>1 refused</strong>"))
                let issues = try #require(report.text.after(last: "id=\"import-issues\""))
                #expect(
                    issues.contains("<td class=\"num\">3</td><td><code>IMP-2</code></td>"),
                    "the bad line, by its number")
                let imported = "SELECT count(*) FROM goods WHERE sku LIKE 'IMP-%'"
                #expect(try await env.ownerScalar(imported, as: Int64.self) == 0, "a check changes nothing")
                #expect(try await env.auditCount("goods.import") == imports + 1, "the check is audited (a dry run)")
                let dryRuns = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'goods.import' AND reason = 'dry_run' AND \
                    session_id IS NOT NULL
                    """,
                    as: Int64.self)
                #expect(dryRuns == 1)

                var other = ConsoleClient(client)
                _ = try await other.signIn(email, password)
                #expect(
                    try await other.get(reportPath).status == 404,
                    "a staged file belongs to the session that uploaded it")
                #expect(
                    try await other.post("\(reportPath)/apply", [:], csrf: try await other.get("/console/goods").csrf)
                        .status == 404)

                let applied = try await admin.post("\(reportPath)/apply", [:], csrf: report.csrf)
                #expect(applied.status == 303 && applied.location == "/console/goods")
                #expect(try await env.ownerScalar(imported, as: Int64.self) == 2, "the good lines, the bad one skipped")
                #expect(try await env.auditCount("goods.import") == imports + 2)
                #expect(try await admin.get(reportPath).status == 404, "the staged copy is gone once applied")

                let export = try await admin.get("/console/goods/export?format=csv")
                #expect(export.status == 200)
                #expect(export.headers[.contentDisposition] == "attachment; filename=\"goods.csv\"")
                #expect(
                    export.text.hasPrefix(Self.header) && export.text.contains("IMP-1,Protein bar")
                        && export.text.contains("IMP-3,Shaker"))

                let found = try await admin.get("/console/goods?q=imp-")
                #expect(found.text.contains("IMP-1") && found.text.contains("IMP-3"), "search by SKU prefix, any case")
                let byName = try await admin.get("/console/goods?q=shak")
                #expect(byName.text.contains("IMP-3") && !byName.text.contains("IMP-1"), "search by a part of the name")
                #expect(!(try await admin.get("/console/goods?q=%25").text.contains("IMP-1")), "% is matched as itself")
            }
        }
    }

    @Test(
        """
        a malformed file is refused on the form (422, nothing staged); an upload past the ordinary limit is read \
        only from a live session (413)
        """
    )
    func refusals() async throws {
        try await TestEnvironment.with { env in
            // Limits of 64 KiB and 1 MiB: the limits, not their sizes, are under test.
            try await env.withApp(maxBodySize: 64 << 10, maxBulkBodySize: 1 << 20) { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let form = try await admin.get("/console/goods/import")
                let malformed = try await admin.post(
                    "/console/goods/import", [:], file: ("file", "goods.csv", "nothing,we,know\n1,2,3"), csrf: form.csrf
                )
                #expect(malformed.status == 422 && malformed.text.contains("cannot be read"))
                #expect(try await env.ownerScalar("SELECT count(*) FROM staged_goods_imports", as: Int64.self) == 0)

                let large = String(repeating: "X", count: 128 << 10)
                let anonymous = try await ConsoleClient(client).post(
                    "/console/goods/import", [:], file: ("file", "big.csv", large), csrf: "x")
                #expect(anonymous.status == 413, "no session: the ordinary limit")
                let signedIn = try await admin.post(
                    "/console/goods/import", [:], file: ("file", "big.csv", large), csrf: form.csrf)
                #expect(
                    signedIn.status == 422, "a live session may send more (the file is then checked: it has no header)")
                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let auditorForm = try await auditor.get("/console/home")
                let refused = try await auditor.post(
                    "/console/goods/import", [:], file: ("file", "big.csv", large), csrf: auditorForm.csrf)
                #expect(
                    refused.status == 413,
                    "a role that may not import gets the ordinary limit: the body is not read past it")
            }
        }
    }

    @Test(
        """
        a shop holds at most 5 checked files at once (the sixth is refused in place, nothing staged); maintenance \
        purge deletes the expired ones
        """
    )
    func stagedQuota() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let admin = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[0].admin.operatorID)
                let form = try await admin.get("/console/goods/import")
                let csv = [Self.header, "Q-1,Protein bar,,snacks,250,,10,active,"].joined(separator: "\n")
                for index in 1...StageGoodsImport.quotaFiles {
                    let staged = try await admin.post(
                        "/console/goods/import", [:], file: ("file", "goods\(index).csv", csv), csrf: form.csrf)
                    #expect(staged.status == 303, "file \(index) is staged")
                }
                let sixth = try await admin.post(
                    "/console/goods/import", [:], file: ("file", "goods6.csv", csv), csrf: form.csrf)
                #expect(sixth.status == 422 && sixth.text.contains("checked files"), "the sixth is refused in place")
                let held = "SELECT count(*) FROM staged_goods_imports"
                #expect(try await env.ownerScalar(held, as: Int64.self) == Int64(StageGoodsImport.quotaFiles))
                let other = try await ConsoleClient.signedIn(env, client, as: env.fixture.partners[1].admin.operatorID)
                let otherForm = try await other.get("/console/goods/import")
                #expect(
                    try await other.post(
                        "/console/goods/import", [:], file: ("file", "goods.csv", csv), csrf: otherForm.csrf
                    ).status == 303,
                    "another shop's quota is its own")
            }
            env.clock.advance(by: StageGoodsImport.lifetime + 1)
            let purged = try await env.database.run(
                PurgeExpiredData(dryRun: false), context: env.context(.platformAdmin))
            #expect(purged.stagedImports == StageGoodsImport.quotaFiles + 1)
            #expect(try await env.ownerScalar("SELECT count(*) FROM staged_goods_imports", as: Int64.self) == 0)
        }
    }
}
