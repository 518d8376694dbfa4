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
            list: "goods", itemLabel: "SKU", verb: "Archive", doneWord: "archived", prefix: "good_", label: \.sku,
            name: \.name)
        registerBulk(bulk, on: group) { console, ids, dryRun in
            try await BulkGoodsArchive(goodIDs: ids, dryRun: dryRun).run(database, context: console.context)
        }
    }
}
