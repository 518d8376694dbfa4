import Foundation
import PostgresNIO

/// A lock on an account: a record of its own, kept after it is lifted.
public struct AccountLock: Sendable, Codable, Equatable {
    public enum Cause: String, Sendable, Codable { case manual, failedLogins = "failed_logins" }
    public var id: UUID
    public var cause: Cause
    public var reason: String
    public var failedAttempts: Int?
    public var lockedBy: UUID?
    public var lockedAt: Date
    public var until: Date?
    public var liftedAt: Date?
    public var liftedBy: UUID?
    public var liftReason: String?
}

/// A customer account as the back office sees it, with its open lock if any.
public struct Customer: Sendable, Equatable {
    public var id: UUID
    public var email: String
    public var displayName: String
    public var status: AccountStatus
    public var failedLogins: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var deletedAt: Date?
    public var version: Int64
    public var lock: AccountLock?

    /// The ETag of this version.
    public var etag: String { EntityTag.of(version) }

    /// This account with PII masked (for auditors).
    public var masked: Customer {
        var copy = self
        copy.email = PIIMask.email(email)
        copy.displayName = PIIMask.name(displayName)
        return copy
    }

    /// What the audit log records of the account: its state, never its PII (the log outlives purges).
    public var snapshot: String {
        struct Snapshot: Encodable {
            let status: String, failed_logins: Int, version: Int64
            let lock_id: String?, lock_cause: String?, lock_until: Date?
        }
        return AuditRecord.json(
            Snapshot(
                status: status.rawValue, failed_logins: failedLogins, version: version, lock_id: lock?.id.text, lock_cause: lock?.cause.rawValue,
                lock_until: lock?.until))
    }

    /// Columns read by `decode(_:)`, for `FROM customers c LEFT JOIN account_locks l ON … open lock`.
    static let columns = """
        c.id, c.email, c.display_name, c.status, c.failed_logins, c.created_at, c.updated_at, c.deleted_at, c.version,
        l.id, l.cause, l.reason, l.failed_attempts, l.locked_by, l.locked_at, l.until, l.lifted_at, l.lifted_by, l.lift_reason
        """
    static let from = "customers c LEFT JOIN account_locks l ON l.customer_id = c.id AND l.lifted_at IS NULL"

    /// Decodes `columns` cell by cell (cheaper than tuple decoding on list pages).
    static func decode(_ row: PostgresRow) throws -> Customer {
        var cells = row.makeIterator()
        func next<T: PostgresDecodable>(_ type: T.Type) throws -> T {
            guard let cell = cells.next() else { throw Problem.internalError }
            return try cell.decode(T.self)
        }
        var customer = Customer(
            id: try next(UUID.self), email: try next(String.self), displayName: try next(String.self),
            status: try AccountStatus(known: try next(String.self)), failedLogins: try next(Int.self),
            createdAt: try next(Date.self), updatedAt: try next(Date.self), deletedAt: try next(Date?.self),
            version: try next(Int64.self), lock: nil)
        if let lockID = try next(UUID?.self) {
            customer.lock = AccountLock(
                id: lockID, cause: try AccountLock.Cause(known: try next(String.self)), reason: try next(String.self),
                failedAttempts: try next(Int?.self), lockedBy: try next(UUID?.self), lockedAt: try next(Date.self),
                until: try next(Date?.self), liftedAt: try next(Date?.self), liftedBy: try next(UUID?.self),
                liftReason: try next(String?.self))
        }
        return customer
    }
}
