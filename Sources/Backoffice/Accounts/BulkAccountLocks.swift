import BackofficePlatform
import Foundation

/// A manager locks up to 500 accounts at once with one reason, and optionally until when
/// (`accounts.bulk_lock`, and `accounts.lock`): each account locked by `TransitionAccount`, its
/// own audited change, so a refusal of one (locked or deleted already; unknown: not found) leaves
/// the others locked (`Bulk`). A missing reason, or an end not in the future, is refused before
/// any change. A dry run changes
/// nothing and says what each lock would do, checked as the lock checks it.
package struct BulkAccountLocks: BulkChange {
    package static let action: Action = "accounts.bulk_lock"
    let customerIDs: [UUID]
    let reason: String?
    let until: Date?
    let dryRun: Bool

    /// `dryRun` nil: the change itself.
    package init(customerIDs: [UUID], reason: String?, until: Date?, dryRun: Bool?) {
        (self.customerIDs, self.reason, self.until, self.dryRun) = (customerIDs, reason, until, dryRun ?? false)
    }

    /// Runs the bulk for `context`'s principal: its permission and the lock's, then each account's.
    package func run(_ database: Database, context: OperationContext) async throws -> [BulkOutcome<Customer>] {
        try context.permit(Self.action)
        try context.permit(AccountMove.lock.action)
        var validation = Validation()
        Bulk.check(customerIDs, field: "customer_ids", into: &validation)
        validation.text(reason, "reason", max: 1000)
        try validation.check()
        if let until { try await database.read(LockEnd(until: until), context: context) }
        if dryRun { return try await database.read(CheckAccountLocks(customerIDs: customerIDs), context: context) }
        return try await Bulk.each(customerIDs) { id in
            try await database.run(
                TransitionAccount(customerID: id, move: .lock, reason: reason, until: until), context: context
            )
        }
    }
}

/// A bulk lock's dry run: each account read (an unknown one is not found) and checked as its lock
/// checks it (only an active account locks); an account that would be locked is answered as it would be.
struct CheckAccountLocks: Query {
    static let action = BulkAccountLocks.action
    let customerIDs: [UUID]

    func read(in unit: UnitOfWork) async throws -> [BulkOutcome<Customer>] {
        try await Bulk.each(customerIDs, as: .wouldDo) { id in
            var account = try await Customer.fetch(id, in: unit)
            guard let target = AccountMove.lock.target(from: account.status, hasOpenLock: account.lock != nil) else {
                throw DomainError.invalidTransition(
                    "Cannot lock an account that is \(account.status.rawValue).", current: account.status.rawValue)
            }
            account.status = target
            return account
        }
    }
}

/// A bulk lock's end, checked once before any lock: it must be in the future (422 `until`).
struct LockEnd: Query {
    static let action = BulkAccountLocks.action
    let until: Date

    func read(in unit: UnitOfWork) async throws {
        guard until > unit.now else {
            throw DomainError.invalid([
                FieldIssue(field: "until", code: "in_the_past", message: "must be in the future")
            ])
        }
    }
}
