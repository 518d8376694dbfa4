import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The goods list's bulk archive (`BulkGoodsArchive`): the goods ticked on the list, checked
    /// first by a dry run whose page offers to archive those it would, or archived at once. Each
    /// good is its own audited change; the page lists each good's outcome.
    func registerGoodsBulk(on group: RouterGroup<AppRequestContext>) {
        post("goods/bulk-archive", on: group, holdsTransaction: false) { console in
            let dryRun = console.form.text("dry_run") == "yes"
            let ids = console.form.values.keys.sorted().compactMap { name -> UUID? in
                guard name.hasPrefix("good_"), console.form.text(name) == "yes" else { return nil }
                return UUID(uuidString: String(name.dropFirst("good_".count)))
            }
            return try await console.submit {
                let outcomes = try await BulkGoodsArchive(goodIDs: ids, dryRun: dryRun)
                    .run(database, context: console.context)
                return console.page("goods_bulk", title: "Goods: archive in bulk", Self.goodsBulk(outcomes, dryRun))
            } refused: { issues in
                var data = Self.goodsBulk([], dryRun)
                FormRefusal(issues).add(to: &data)
                return console.page(
                    "goods_bulk", title: "Goods: archive in bulk", status: .unprocessableContent, data)
            }
        }
    }

    /// The result page's values: each good's outcome; after a dry run, the goods it would archive,
    /// kept as hidden fields of the form that archives them.
    private static func goodsBulk(_ outcomes: [BulkOutcome<Good>], _ dryRun: Bool) -> [String: Any] {
        let ready = outcomes.filter { $0.kind == .wouldDo }
        return [
            "dryRun": dryRun, "ready": ready.count, "canConfirm": dryRun && !ready.isEmpty,
            "refused": outcomes.count { $0.kind == .refused }, "done": outcomes.count { $0.kind == .done },
            "outcomes": outcomes.map { outcome in
                [
                    "id": outcome.id.text, "sku": outcome.state?.sku ?? String(outcome.id.text.prefix(8)),
                    "name": outcome.state?.name ?? "",
                    "outcome": outcome.kind == .refused ? "refused" : dryRun ? "would archive" : "archived",
                    "refused": outcome.kind == .refused,
                    "detail": outcome.refusal.flatMap(Problem.describing).map { $0.detail ?? $0.title } ?? "",
                ] as [String: Any]
            },
            "hidden": ready.map { ["id": $0.id.text] },
        ]
    }
}
