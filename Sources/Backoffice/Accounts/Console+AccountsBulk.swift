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
            back: "/console/accounts", backLabel: "Accounts", noun: "accounts", itemLabel: "Email", verb: "Lock",
            doneWord: "locked", action: "/console/accounts/bulk-lock", prefix: "customer_",
            href: { "/console/accounts/\($0.text)" }, label: \.email, name: \.displayName)
        post("accounts/bulk-lock", on: group, holdsTransaction: false) { console in
            let dryRun = console.form.text("dry_run") == "yes"
            let reason = console.form.text("reason")
            return try await console.submit(reading: ConsoleBulk<Customer>.issues) {
                let locks = BulkAccountLocks(
                    customerIDs: bulk.ticked(console.form), reason: reason, until: nil, dryRun: dryRun)
                let outcomes = try await locks.run(database, context: console.context)
                return console.page(
                    "bulk", title: "Accounts: lock in bulk",
                    bulk.page(outcomes, dryRun: dryRun, carried: ["reason": reason ?? ""]))
            } refused: { issues in
                var data = bulk.page([], dryRun: dryRun)
                FormRefusal(issues).add(to: &data)
                return console.page("bulk", title: "Accounts: lock in bulk", status: .unprocessableContent, data)
            }
        }
    }
}
