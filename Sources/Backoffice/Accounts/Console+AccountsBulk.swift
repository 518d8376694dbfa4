import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The accounts list's bulk changes, each account's its own audited change: the accounts ticked
    /// on the list, with the one reason typed under it, checked first by a dry run whose page offers
    /// to make the change for those it would (the form's values carried), or changed at once.
    /// - the lock (`BulkAccountLocks`);
    /// - a notice in the app (`BulkAccountNotices`: a subject and a body), under a key the list's form
    ///   carries to the confirmation, so that a form sent twice sends no account the notice twice.
    func registerAccountsBulk(on group: RouterGroup<AppRequestContext>) {
        let bulk = ConsoleBulk<Customer>(
            list: "accounts", itemLabel: "Email", verb: "Lock", doneWord: "locked", prefix: "customer_",
            label: \.email, name: \.displayName)
        registerBulk(bulk, carrying: ["reason"], on: group) { console, ids, dryRun in
            let locks = BulkAccountLocks(
                customerIDs: ids, reason: console.form.text("reason"), until: nil, dryRun: dryRun)
            return try await locks.run(database, context: console.context)
        }
        let message = ConsoleBulk<SentNotice>(
            list: "accounts", itemLabel: "Email", verb: "Message", doneWord: "messaged", prefix: "customer_",
            label: \.account.email, name: \.account.displayName)
        registerBulk(message, carrying: ["reason", "subject", "body", "notice_key"], on: group) {
            console, ids, dryRun in
            let notices = BulkAccountNotices(
                customerIDs: ids, subject: console.form.text("subject"), body: console.form.text("body"),
                reason: console.form.text("reason"), dryRun: dryRun, idempotencyKey: console.form.text("notice_key"))
            return try await notices.run(database, context: console.context)
        }
    }
}
