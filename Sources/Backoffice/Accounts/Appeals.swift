import Foundation
import Logging
import PostgresNIO

/// A customer's appeal against a lock.
public struct Appeal: Sendable, Equatable {
    public var id: UUID
    public var customerID: UUID
    public var lockID: UUID
    public var message: String
    public var status: AppealStatus
    public var createdAt: Date
    public var resolvedAt: Date?
    public var resolvedBy: UUID?
    public var resolutionReason: String?

    static let columns = "id, customer_id, lock_id, message, status, created_at, resolved_at, resolved_by, resolution_reason"

    static func decode(_ row: PostgresRow) throws -> Appeal {
        let c = try row.decode((UUID, UUID, UUID, String, String, Date, Date?, UUID?, String?).self)
        return Appeal(
            id: c.0, customerID: c.1, lockID: c.2, message: c.3, status: try AppealStatus(known: c.4), createdAt: c.5,
            resolvedAt: c.6, resolvedBy: c.7, resolutionReason: c.8)
    }

    var snapshot: String {
        struct Snapshot: Encodable { let appeal_id: String, lock_id: String, status: String }
        return AuditRecord.json(Snapshot(appeal_id: id.text, lock_id: lockID.text, status: status.rawValue))
    }
}

/// The app files an appeal for a locked account (`appeals.file`): one open appeal per lock.
public struct FileAppeal: AuditedOperation {
    public static let action = Action.appealsFile
    let customerID: UUID
    let message: String

    public init(customerID: UUID, message: String) {
        self.customerID = customerID
        self.message = message.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Appeal> {
        var validation = Validation()
        validation.text(message, "message", max: 4000)
        try validation.check()
        let customer = try await AccountStore.fetchForUpdate(customerID, on: connection, logger: database.logger)
        guard customer.status == .locked, let lock = customer.lock else {
            throw Problem.invalidTransition("Only a locked account can appeal.", current: customer.status.rawValue)
        }
        var appeal: Appeal?
        for try await row in try await connection.query(
            """
            INSERT INTO appeals (id, customer_id, lock_id, message) VALUES (\(UUID()), \(customerID), \(lock.id), \(message))
            ON CONFLICT (lock_id) WHERE status = 'open' DO NOTHING
            RETURNING \(unescaped: Appeal.columns)
            """, logger: database.logger)
        {
            appeal = try Appeal.decode(row)
        }
        guard let appeal else {
            throw Problem.conflict("appeal_already_open", "This lock already has an open appeal.")
        }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: customerID.uuidString.lowercased(),
            reason: message, before: nil, after: appeal.snapshot)
        return Audited(appeal, event: event)
    }
}

/// A manager resolves an open appeal (`appeals.resolve`): uphold keeps the lock, lift unlocks the
/// account (audited as `accounts.unlock` too). Resolving a resolved appeal is 409 `invalid_transition`.
public struct ResolveAppeal: AuditedOperation {
    public static let action = Action.appealsResolve
    public enum Decision: String, Sendable { case uphold, lift }
    let appealID: UUID
    let decision: Decision
    let reason: String?

    public init(appealID: UUID, decision: Decision, reason: String?) {
        self.appealID = appealID
        self.decision = decision
        self.reason = reason
    }

    public func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Appeal> {
        let reason = try requireReason(reason)
        var found: Appeal?
        for try await row in try await connection.query(
            "SELECT \(unescaped: Appeal.columns) FROM appeals WHERE id = \(appealID) FOR UPDATE", logger: database.logger)
        {
            found = try Appeal.decode(row)
        }
        guard let before = found else { throw Problem.notFound("Appeal \(appealID.uuidString.lowercased())") }
        guard before.status == .open else {
            throw Problem.invalidTransition("The appeal is already \(before.status.rawValue).", current: before.status.rawValue)
        }
        let status: AppealStatus = decision == .lift ? .lifted : .upheld
        var after = before
        for try await row in try await connection.query(
            """
            UPDATE appeals SET status = \(status.rawValue), resolved_at = now(), resolved_by = \(context.principal.operatorID),
                resolution_reason = \(reason)
            WHERE id = \(appealID) RETURNING \(unescaped: Appeal.columns)
            """, logger: database.logger)
        {
            after = try Appeal.decode(row)
        }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: before.customerID.uuidString.lowercased(),
            reason: "\(decision.rawValue): \(reason)", before: before.snapshot, after: after.snapshot)
        guard decision == .lift else { return Audited(after, event: event) }
        let account = try await AccountStore.fetchForUpdate(before.customerID, on: connection, logger: database.logger)
        guard account.status == .locked, account.lock?.id == before.lockID else {
            return Audited(after, event: event)  // the lock was already lifted (or the account deleted): nothing more to undo
        }
        let unlocked = try await AccountStore.write(
            account, status: .active, failedLogins: 0, lock: .lift(by: context.principal.operatorID, reason: "appeal lifted: \(reason)"),
            on: connection, logger: database.logger)
        return Audited(after, event: event, more: [accountEvent(.accountsUnlock, account, unlocked, reason: "appeal lifted: \(reason)")])
    }
}
