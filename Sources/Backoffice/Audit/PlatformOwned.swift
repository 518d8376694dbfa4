import BackofficePlatform
import Foundation

/// A record the platform owns rather than a tenant (an article, a recommendation): read back by id
/// after a change, and audited on the platform's chain with its snapshot before and after.
package protocol PlatformOwned: Sendable {
    /// The audit events' `target_type` (`article`).
    static var auditTargetType: String { get }
    /// The record `id`; with `forUpdate`, locked until the unit of work ends.
    static func fetch(_ id: UUID, forUpdate: Bool, in unit: UnitOfWork) async throws -> Self
    /// What the audit event keeps of the record.
    var snapshot: String { get throws }
}

extension PlatformOwned {
    /// The record `id` as changed, with the change's audit event (`before` nil when it is new).
    package static func audited(
        _ action: Action, _ id: UUID, before: Self?, reason: String? = nil, in unit: UnitOfWork
    ) async throws -> Audited<Self> {
        let after = try await fetch(id, forUpdate: false, in: unit)
        return Audited(
            after,
            event: AuditRecord(
                action: action, tenantID: platformTenantID, targetType: auditTargetType, targetID: id.text,
                reason: reason, before: try before?.snapshot, after: try after.snapshot))
    }
}
