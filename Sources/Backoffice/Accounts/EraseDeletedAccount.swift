import BackofficePlatform
import Foundation
import PostgresNIO

/// A soft-deleted account erased now, before the retention period would purge it
/// (`accounts.erase`, reason required): when the customer asks for erasure (GDPR Art. 17) and
/// cannot wait, or a court orders it. It is erased exactly as `maintenance purge` erases
/// (`AccountErasure`), with one audit event. It cannot be undone, so `policies/approvals.yaml`
/// holds it for a second person's approval, and it runs when approved.
///
/// Only a deleted account is erased (409 `invalid_transition` otherwise, as when it was restored
/// while the request waited), once no subscription of it is live (409 `subscription_live`); an
/// account erased already, or never known, is 404.
package struct EraseDeletedAccount: ApprovalGated {
    package static let action: Action = "accounts.erase"
    package let customerID: UUID
    package let reason: String?

    package init(customerID: UUID, reason: String?) { (self.customerID, self.reason) = (customerID, reason) }

    package var approvalAmount: Int64? { nil }
    package var approvalTarget: (type: String, id: String) { ("customer", customerID.text) }
    package var approvalSummary: String {
        "Erase the deleted account \(customerID.text) now, before its retention period ends"
    }
    package var approvalReason: String? { reason }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ErasedAccount> {
        let reason = try requireReason(reason)
        let before = try await Customer.fetch(customerID, forUpdate: true, in: unit)
        guard before.status == .deleted else {
            throw DomainError.invalidTransition(
                "Only a deleted account is erased; this one is \(before.status.rawValue).",
                current: before.status.rawValue)
        }
        try await AccountErasure.requireNoLiveSubscription(customerID, in: unit)
        try await AccountErasure.erase([customerID], deletedBefore: .distantFuture, in: unit)
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: customerID.text,
            reason: reason, before: try before.snapshot, after: try AccountErasure.auditedAfter)
        return Audited(
            ErasedAccount(
                customerID: customerID, deletedAt: before.deletedAt, erasedAt: unit.now,
                erased: AccountErasure.erased, kept: AccountErasure.kept),
            event: event)
    }
}

/// An account erased before its retention period ended: when, and what was erased and kept.
package struct ErasedAccount: Sendable, Equatable {
    package var customerID: UUID
    package var deletedAt: Date?
    package var erasedAt: Date
    package var erased: [String]
    package var kept: [String]
}
