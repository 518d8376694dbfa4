import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The accounts list's bulk lock (`BulkAccountLocks`): the accounts ticked on the list, locked
    /// with the one reason typed under it, checked first by a dry run whose page offers to lock those
    /// it would (the reason carried), or locked at once. Each lock is its own audited change.
    func registerAccountsBulk(on group: RouterGroup<AppRequestContext>) {
        let bulk = ConsoleBulk<Customer>(
            list: "accounts", itemLabel: "Email", verb: "Lock", doneWord: "locked", prefix: "customer_",
            label: \.email, name: \.displayName)
        registerBulk(bulk, carrying: ["reason"], on: group) { console, ids, dryRun in
            let locks = BulkAccountLocks(
                customerIDs: ids, reason: console.form.text("reason"), until: nil, dryRun: dryRun)
            return try await locks.run(database, context: console.context)
        }
    }
}
