import BackofficePlatform
import Foundation

/// A manager sends one notice to up to 500 accounts at once, with one reason
/// (`accounts.bulk_message`, and `accounts.message`): each account's notice sent by
/// `SendAccountNotice`, its own audited change, so a refusal of one (deleted: `invalid_transition`;
/// unknown: not found) leaves the others messaged (`Bulk`). A missing reason, subject or body is
/// refused before any notice. A dry run sends nothing and says whom the notice would reach. Sent
/// again under the same Idempotency-Key, it sends no account a second notice (`sent_already`).
package struct BulkAccountNotices: BulkChange {
    package static let action: Action = "accounts.bulk_message"
    let customerIDs: [UUID]
    let subject: String?
    let body: String?
    let reason: String?
    let dryRun: Bool
    let idempotencyKey: String?

    /// `dryRun` nil: the change itself.
    package init(
        customerIDs: [UUID], subject: String?, body: String?, reason: String?, dryRun: Bool?, idempotencyKey: String?
    ) {
        (self.customerIDs, self.subject, self.body, self.reason, self.dryRun, self.idempotencyKey) = (
            customerIDs, subject, body, reason, dryRun ?? false, idempotencyKey
        )
    }

    /// Runs the bulk for `context`'s principal: its permission and the notice's, then each account's.
    package func run(_ database: Database, context: OperationContext) async throws -> [BulkOutcome<SentNotice>] {
        try context.permit(Self.action)
        try context.permit(SendAccountNotice.action)
        var validation = Validation()
        Bulk.check(customerIDs, field: "customer_ids", into: &validation)
        validation.text(reason, "reason", max: 1000)
        NoticeText.check(subject: subject, body: body, into: &validation)
        try validation.check()
        let text = try NoticeText(subject: subject, body: body)
        if dryRun {
            let check = CheckAccountNotices(customerIDs: customerIDs, text: text, idempotencyKey: idempotencyKey)
            return try await database.read(check, context: context)
        }
        return try await Bulk.each(customerIDs) { id in
            try await database.run(
                SendAccountNotice(customerID: id, text: text, reason: reason, idempotencyKey: idempotencyKey),
                context: context)
        }
    }
}

/// A bulk notice's dry run: each account read (an unknown one is not found) and checked as its
/// notice checks it (a deleted account gets none; nor does one sent it under the same key already).
struct CheckAccountNotices: Query {
    static let action = BulkAccountNotices.action
    let customerIDs: [UUID]
    let text: NoticeText
    let idempotencyKey: String?

    func read(in unit: UnitOfWork) async throws -> [BulkOutcome<SentNotice>] {
        let requestKey = SendAccountNotice.requestKey(idempotencyKey, in: unit)
        return try await Bulk.each(customerIDs, as: .wouldDo) { id in
            let account = try await SendAccountNotice.messageable(id, in: unit)
            try await SendAccountNotice.refuseRepeat(id, requestKey: requestKey, text: text, in: unit)
            return SentNotice(account: account, notice: nil)
        }
    }
}
