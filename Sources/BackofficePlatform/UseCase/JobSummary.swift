import Foundation

/// What one run of a job found and did, in figures: written as the run's own audit event.
package protocol JobSummary: Encodable, Sendable {
    /// The job's action (the event's).
    static var action: Action { get }
    /// What the job looks at (`payments`, `invoices`): the event's target type.
    static var targetType: String { get }
}

/// A job's run closed by one audit event on the platform's chain: the summary as its `after`,
/// the target the run looked at (a provider's name) as its target id.
package struct RecordJobSummary<Summary: JobSummary>: AuditedOperation {
    package static var action: Action { Summary.action }
    let target: String
    let summary: Summary

    package init(target: String, summary: Summary) { (self.target, self.summary) = (target, summary) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Void> {
        Audited(
            (),
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: Summary.targetType, targetID: target,
                reason: nil, before: nil, after: try AuditRecord.json(summary)))
    }
}
