import BackofficePlatform
import Foundation
import PostgresNIO

/// The audit record of a change to one account.
func accountEvent(_ action: Action, _ before: Customer?, _ after: Customer, reason: String?) throws -> AuditRecord {
    AuditRecord(
        action: action, tenantID: platformTenantID, targetType: "customer", targetID: after.id.text,
        reason: reason, before: try before?.snapshot, after: try after.snapshot)
}

/// A manager moves an account (`AccountMove`): lock (`accounts.lock`, optionally until a time when
/// it lifts itself), unlock (`accounts.unlock`: the lock record closed with who lifted it), delete
/// (`accounts.delete`: a soft delete, purged after the retention period; its live subscription ends
/// at once, `SubscriptionRecord.endForDeletedAccount`) or restore
/// (`accounts.restore`: active again, or locked if its lock is still open). The call needs the
/// move's permission, and its audit event records the move's action.
/// A no-op or illegal move (locking a locked account, unlocking an active one) is 409
/// `invalid_transition` with the current status, and changes and logs nothing.
package struct TransitionAccount: AuditedChange {
    package let customerID: UUID
    package let move: AccountMove
    let reason: String?
    /// When a lock lifts itself; honoured for `.lock` only (callers pass nil for the other moves).
    let until: Date?
    let ifMatch: String?

    package init(customerID: UUID, move: AccountMove, reason: String?, until: Date? = nil, ifMatch: String? = nil) {
        (self.customerID, self.move, self.reason, self.until, self.ifMatch) = (
            customerID, move, reason, until, ifMatch
        )
    }

    package var permission: Action { move.action }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Customer> {
        let reason = try requireReason(reason)
        if let until, until <= unit.now {
            throw DomainError.invalid([
                FieldIssue(field: "until", code: "in_the_past", message: "must be in the future")
            ])
        }
        let live = move == .delete ? try await SubscriptionRecord.lockLive(of: customerID, in: unit) : []
        let before = try await Customer.fetch(customerID, forUpdate: true, in: unit)
        if move == .delete { try await SubscriptionRecord.refuseMadeMeanwhile(of: customerID, locked: live, in: unit) }
        try EntityTag.check(ifMatch, version: before.version)
        guard let target = move.target(from: before.status, hasOpenLock: before.lock != nil) else {
            throw DomainError.invalidTransition(
                "Cannot \(move.rawValue) an account that is \(before.status.rawValue).",
                current: before.status.rawValue)
        }
        let change: Customer.LockChange
        switch move {
        case .lock:
            change = .open(
                AccountLock(
                    id: unit.newID(), cause: .manual, reason: reason, failedAttempts: nil,
                    lockedBy: unit.principal.operatorID,
                    lockedAt: unit.now, until: until))
        case .unlock: change = .lift(by: unit.principal.operatorID, reason: reason)
        case .delete, .restore: change = .keep
        }
        let failedLogins = move == .unlock ? 0 : before.failedLogins
        var after = try await before.write(status: target, failedLogins: failedLogins, lock: change, in: unit)
        let ended = try await SubscriptionRecord.endForDeletedAccount(live, in: unit)
        // an ended subscription moves the account's state and version (its trigger): answered as it is now
        if !ended.isEmpty { after = try await Customer.fetch(customerID, in: unit) }
        return Audited(after, event: try accountEvent(move.action, before, after, reason: reason), more: ended)
    }
}

/// The app syncs a customer (`accounts.sync`): an idempotent upsert by id of the email and name.
/// The subscription state is derived from the subscription records (`Billing`): a sync may repeat
/// it, and one that sends another state or renewal date is 422 `derived` and changes nothing.
/// Creating or changing the email or name is audited with what changed; an identical sync changes
/// and logs nothing. An id that is a FitPoints platform account's or a challenge's is
/// `conflict(reserved_customer_id)` and writes nothing: the database refuses to open a wallet under
/// another account's id (0022).
package struct SyncCustomer: AuditedOperation {
    package static let action: Action = "accounts.sync"
    package enum Outcome: Sendable { case created, updated, unchanged }
    let id: UUID
    let email: String
    let displayName: String
    let subscription: Subscription?
    let renewsAt: Date?

    package init(id: UUID, email: String, displayName: String, subscription: Subscription? = nil, renewsAt: Date? = nil)
    {
        self.id = id
        self.email = email.trimmingCharacters(in: .whitespaces)
        self.displayName = displayName.trimmingCharacters(in: .whitespaces)
        self.subscription = subscription
        self.renewsAt = renewsAt
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(Customer, Outcome)> {
        var validation = Validation()
        validation.email(email, "email")
        validation.text(displayName, "display_name", max: 200, required: false)
        try validation.check()
        let existing: Customer?
        do { existing = try await Customer.fetch(id, forUpdate: true, in: unit) } catch DomainError.notFound {
            existing = nil
        }
        try refuseOtherSubscriptionState(than: existing)
        var changed: [String] = []
        if existing?.email != email { changed.append("email") }
        if existing?.displayName != displayName { changed.append("display_name") }
        if let existing, changed.isEmpty { return .unchanged((existing, .unchanged)) }
        do {
            try await unit.execute(
                """
                INSERT INTO customers (id, email, display_name, created_at, updated_at)
                VALUES (\(id), \(email), \(displayName), \(unit.now), \(unit.now))
                ON CONFLICT (id) DO UPDATE SET email = excluded.email, display_name = excluded.display_name,
                    version = customers.version + 1, updated_at = \(unit.now)
                """)
        } catch let error as PSQLError where error.serverInfo?[.constraintName] == "fitpoints_wallet_identity" {
            throw DomainError.conflict(
                code: "reserved_customer_id",
                detail:
                    "This id names a FitPoints platform account or a challenge, not a customer; nothing was changed.")
        }
        let after = try await Customer.fetch(id, in: unit)
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: id.text,
            reason: existing == nil ? "created" : "updated: " + changed.joined(separator: ", "),
            before: try existing?.snapshot, after: try after.snapshot)
        return Audited((after, existing == nil ? .created : .updated), event: event)
    }

    /// A subscription state or renewal date other than the records' is refused (422 `derived`).
    private func refuseOtherSubscriptionState(than existing: Customer?) throws {
        var validation = Validation()
        let detail =
            "derived from the subscription records (POST /v1/customers/{id}/subscriptions): "
            + "send it unchanged or omit it"
        validation.require(
            subscription == nil || subscription == (existing?.subscription ?? .none), "subscription", "derived",
            detail)
        let sameRenewal = renewsAt.map { sent in
            existing?.renewsAt.map { abs($0.timeIntervalSince(sent)) < 0.001 } ?? false
        }
        validation.require(sameRenewal ?? true, "renews_at", "derived", detail)
        try validation.check()
    }
}

/// The app reports a login attempt (`accounts.report_login`). Consecutive failures reaching the
/// threshold of `policies/security.yaml` lock the account (cause `failed_logins`, reason
/// `too_many_failed_logins`), audited with the system as actor; a success resets the count.
/// Attempts are recorded in `login_attempts` (the lock's evidence); every change of the count is
/// audited too (`accounts.report_login`), an attempt that changes nothing is not.
package struct ReportLoginAttempt: AuditedOperation {
    package static let action: Action = "accounts.report_login"
    let customerID: UUID
    let succeeded: Bool

    package func perform(in unit: UnitOfWork) async throws -> Audited<Customer> {
        let before = try await Customer.fetch(customerID, forUpdate: true, in: unit)
        guard before.status != .deleted else {
            throw DomainError.invalidTransition("The account is deleted.", current: before.status.rawValue)
        }
        try await unit.execute(
            """
            INSERT INTO login_attempts (customer_id, succeeded, request_id, occurred_at)
            VALUES (\(customerID), \(succeeded), \(unit.context.requestID), \(unit.now))
            """)
        let rule = LockoutRule(threshold: unit.policies.security.consecutiveFailedLogins)
        switch rule.outcome(failures: before.failedLogins, succeeded: succeeded, status: before.status) {
        case .count(let failures):
            guard failures != before.failedLogins else { return .unchanged(before) }
            let after = try await before.write(status: before.status, failedLogins: failures, lock: .keep, in: unit)
            return Audited(
                after,
                event: try accountEvent(
                    Self.action, before, after, reason: succeeded ? "login_succeeded" : "login_failed"))
        case .lock(let failures):
            let lock = AccountLock(
                id: unit.newID(), cause: .failedLogins, reason: LockoutRule.reason, failedAttempts: failures,
                lockedBy: nil, lockedAt: unit.now,
                until: nil)
            let after = try await before.write(status: .locked, failedLogins: failures, lock: .open(lock), in: unit)
            return Audited(
                after, event: try accountEvent("accounts.lock", before, after, reason: LockoutRule.reason).bySystem)
        }
    }
}

/// The app reports a completed password reset (`accounts.password_reset`): the failed-login count
/// resets and a lock caused by failed logins is lifted. A manager's manual lock stays.
package struct ReportPasswordReset: AuditedOperation {
    package static let action: Action = "accounts.password_reset"
    let customerID: UUID

    package init(customerID: UUID) { self.customerID = customerID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Customer> {
        let before = try await Customer.fetch(customerID, forUpdate: true, in: unit)
        guard before.status != .deleted else {
            throw DomainError.invalidTransition("The account is deleted.", current: before.status.rawValue)
        }
        if before.status == .locked, before.lock?.cause == .failedLogins {
            let after = try await before.write(
                status: .active, failedLogins: 0, lock: .lift(by: unit.principal.operatorID, reason: "password_reset"),
                in: unit)
            return Audited(after, event: try accountEvent("accounts.unlock", before, after, reason: "password_reset"))
        }
        guard before.failedLogins != 0 else { return .unchanged(before) }
        let after = try await before.write(status: before.status, failedLogins: 0, lock: .keep, in: unit)
        return Audited(after, event: try accountEvent(Self.action, before, after, reason: "password_reset"))
    }
}
