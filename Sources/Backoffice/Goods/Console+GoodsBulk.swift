import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The goods list's bulk archive (`BulkGoodsArchive`): the goods ticked on the list, checked
    /// first by a dry run whose page offers to archive those it would, or archived at once. Each
    /// good is its own audited change; the page lists each good's outcome.
    func registerGoodsBulk(on group: RouterGroup<AppRequestContext>) {
        let bulk = ConsoleBulk<Good>(
            back: "/console/goods", backLabel: "Goods", noun: "goods", itemLabel: "SKU", verb: "Archive",
            doneWord: "archived", action: "/console/goods/bulk-archive", prefix: "good_",
            href: { "/console/goods/\($0.text)" }, label: \.sku, name: \.name)
        post("goods/bulk-archive", on: group, holdsTransaction: false) { console in
            let dryRun = console.form.text("dry_run") == "yes"
            return try await console.submit(reading: ConsoleBulk<Good>.issues) {
                let outcomes = try await BulkGoodsArchive(goodIDs: bulk.ticked(console.form), dryRun: dryRun)
                    .run(database, context: console.context)
                return console.page("bulk", title: "Goods: archive in bulk", bulk.page(outcomes, dryRun: dryRun))
            } refused: { issues in
                var data = bulk.page([], dryRun: dryRun)
                FormRefusal(issues).add(to: &data)
                return console.page("bulk", title: "Goods: archive in bulk", status: .unprocessableContent, data)
            }
        }
    }
}
