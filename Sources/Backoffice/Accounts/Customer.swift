import BackofficePlatform
import Foundation
import PostgresNIO

/// A lock on an account: a record of its own, kept after it is lifted.
package struct AccountLock: Sendable, Codable, Equatable {
    package enum Cause: String, Sendable, Codable { case manual, failedLogins = "failed_logins" }
    package var id: UUID
    package var cause: Cause
    package var reason: String
    package var failedAttempts: Int?
    package var lockedBy: UUID?
    package var lockedAt: Date
    package var until: Date?
    package var liftedAt: Date?
    package var liftedBy: UUID?
    package var liftReason: String?
}

/// A customer's subscription, as the app reports it.
package enum Subscription: String, Sendable, CaseIterable, Codable {
    case none, active, lapsed
}

/// A customer account as the back office sees it, with its open lock if any.
package struct Customer: Sendable, Equatable {
    package var id: UUID
    package var email: String
    package var displayName: String
    package var status: AccountStatus
    package var subscription: Subscription
    package var renewsAt: Date?
    package var failedLogins: Int
    package var createdAt: Date
    package var updatedAt: Date
    package var deletedAt: Date?
    package var version: Int64
    package var lock: AccountLock?

    /// The ETag of this version.
    package var etag: String { EntityTag.of(version) }

    /// This account with PII masked (for auditors).
    package var masked: Customer {
        var copy = self
        copy.email = PIIMask.email(email)
        copy.displayName = PIIMask.name(displayName)
        return copy
    }

    /// What the audit log records of the account: its state, never its PII (the log outlives purges).
    package var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let status: String, subscription: String, renews_at: Date?, failed_logins: Int, version: Int64
                let lock_id: String?, lock_cause: String?, lock_until: Date?
            }
            return try AuditRecord.json(
                Snapshot(
                    status: status.rawValue, subscription: subscription.rawValue, renews_at: renewsAt,
                    failed_logins: failedLogins, version: version,
                    lock_id: lock?.id.text, lock_cause: lock?.cause.rawValue,
                    lock_until: lock?.until))
        }
    }
}
