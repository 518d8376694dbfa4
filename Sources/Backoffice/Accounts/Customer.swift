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

/// A customer's subscription, as the app reports it.
public enum Subscription: String, Sendable, CaseIterable, Codable {
    case none, active, lapsed
}

/// A customer account as the back office sees it, with its open lock if any.
public struct Customer: Sendable, Equatable {
    public var id: UUID
    public var email: String
    public var displayName: String
    public var status: AccountStatus
    public var subscription: Subscription
    public var renewsAt: Date?
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
        get throws {
            struct Snapshot: Encodable {
                let status: String, subscription: String, renews_at: Date?, failed_logins: Int, version: Int64
                let lock_id: String?, lock_cause: String?, lock_until: Date?
            }
            return try AuditRecord.json(
                Snapshot(
                    status: status.rawValue, subscription: subscription.rawValue, renews_at: renewsAt, failed_logins: failedLogins, version: version,
                    lock_id: lock?.id.text, lock_cause: lock?.cause.rawValue,
                    lock_until: lock?.until))
        }
    }
}
