import Foundation
import Logging
import PostgresNIO

/// A customer's appeal against a lock.
package struct Appeal: Sendable, Equatable {
    package var id: UUID
    package var customerID: UUID
    package var lockID: UUID
    package var message: String
    package var status: AppealStatus
    package var createdAt: Date
    package var resolvedAt: Date?
    package var resolvedBy: UUID?
    package var resolutionReason: String?

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let appeal_id: String, lock_id: String, status: String }
            return try AuditRecord.json(Snapshot(appeal_id: id.text, lock_id: lockID.text, status: status.rawValue))
        }
    }
}

/// The app files an appeal for a locked account (`appeals.file`): one open appeal per lock.
package struct FileAppeal: AuditedOperation {
    package static let action: Action = "appeals.file"
    let customerID: UUID
    let message: String

    package init(customerID: UUID, message: String) {
        self.customerID = customerID
        self.message = message.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Appeal> {
        var validation = Validation()
        validation.text(message, "message", max: 4000)
        try validation.check()
        let customer = try await Customer.fetch(customerID, forUpdate: true, in: unit)
        guard customer.status == .locked, let lock = customer.lock else {
            throw DomainError.invalidTransition("Only a locked account can appeal.", current: customer.status.rawValue)
        }
        let appeal = try await unit.first(
            """
            INSERT INTO appeals (id, customer_id, lock_id, message, created_at)
            VALUES (\(unit.newID()), \(customerID), \(lock.id), \(message), \(unit.now))
            ON CONFLICT (lock_id) WHERE status = 'open' DO NOTHING
            RETURNING \(unescaped: Appeal.columns)
            """, as: Appeal.self)
        guard let appeal else {
            throw DomainError.conflict(code: "appeal_already_open", detail: "This lock already has an open appeal.")
        }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer",
            targetID: customerID.uuidString.lowercased(),
            reason: message, before: nil, after: try appeal.snapshot)
        return Audited(appeal, event: event)
    }
}

/// A manager resolves an open appeal (`appeals.resolve`): uphold keeps the lock, lift unlocks the
/// account (audited as `accounts.unlock` too). Resolving a resolved appeal is 409 `invalid_transition`.
package struct ResolveAppeal: AuditedOperation {
    package static let action: Action = "appeals.resolve"
    package enum Decision: String, Sendable { case uphold, lift }
    let appealID: UUID
    let decision: Decision
    let reason: String?

    package func perform(in unit: UnitOfWork) async throws -> Audited<Appeal> {
        let reason = try requireReason(reason)
        let before = try await unit.one(
            "SELECT \(unescaped: Appeal.columns) FROM appeals WHERE id = \(appealID) FOR UPDATE", as: Appeal.self,
            else: DomainError.notFound("Appeal \(appealID.text)"))
        guard before.status == .open else {
            throw DomainError.invalidTransition(
                "The appeal is already \(before.status.rawValue).", current: before.status.rawValue)
        }
        let status: AppealStatus = decision == .lift ? .lifted : .upheld
        let after =
            try await unit.first(
                """
                UPDATE appeals SET status = \(status.rawValue), resolved_at = \(unit.now), resolved_by =
                    \(unit.principal.operatorID),
                    resolution_reason = \(reason)
                WHERE id = \(appealID) RETURNING \(unescaped: Appeal.columns)
                """, as: Appeal.self) ?? before
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer",
            targetID: before.customerID.uuidString.lowercased(),
            reason: "\(decision.rawValue): \(reason)", before: try before.snapshot, after: try after.snapshot)
        guard decision == .lift else { return Audited(after, event: event) }
        let account = try await Customer.fetch(before.customerID, forUpdate: true, in: unit)
        guard account.status == .locked, account.lock?.id == before.lockID else {
            // the lock was already lifted (or the account deleted): nothing more to undo
            return Audited(after, event: event)
        }
        let unlocked = try await account.write(
            status: .active, failedLogins: 0,
            lock: .lift(by: unit.principal.operatorID, reason: "appeal lifted: \(reason)"), in: unit)
        return Audited(
            after, event: event,
            more: [try accountEvent("accounts.unlock", account, unlocked, reason: "appeal lifted: \(reason)")])
    }
}
