import Foundation
import BackofficePlatform

/// A message from the company to customers in the app: an announcement or a maintenance notice.
package struct SystemMessage: Sendable, Equatable {
    package enum Severity: String, Sendable, CaseIterable { case info, warning, maintenance, critical }
    package enum Audience: String, Sendable, CaseIterable { case all, subscribers, nonSubscribers = "non_subscribers" }
    /// What is stored: a draft until published, retracted for good.
    package enum Status: String, Sendable, CaseIterable { case draft, published, retracted }
    /// What a reader sees at a given time.
    package enum State: String, Sendable, CaseIterable { case draft, scheduled, published, expired, retracted }

    package var id: UUID
    package var title: String
    package var body: String
    package var severity: Severity
    package var audience: Audience
    package var publishAt: Date?
    package var expiresAt: Date?
    package var windowStartsAt: Date?
    package var windowEndsAt: Date?
    package var status: Status
    package var retractedAt: Date?
    package var retractReason: String?
    package var createdAt: Date
    package var updatedAt: Date
    package var version: Int64

    /// The state at `now`: a published message is scheduled before `publish_at`, showing until
    /// `expires_at`, expired from then on. No job moves it: the time decides.
    package func state(at now: Date) -> State {
        switch status {
        case .draft: return .draft
        case .retracted: return .retracted
        case .published:
            if let publishAt, publishAt > now { return .scheduled }
            if let expiresAt, expiresAt <= now { return .expired }
            return .published
        }
    }

    /// What the audit log records of a message: its lifecycle, not its text.
    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let status: String, severity: String, audience: String, publish_at: Date?, expires_at: Date?,
                    version: Int64
            }
            return try AuditRecord.json(
                Snapshot(
                    status: status.rawValue, severity: severity.rawValue, audience: audience.rawValue,
                    publish_at: publishAt, expires_at: expiresAt,
                    version: version))
        }
    }
}

/// The audit record of a change to one message.
func messageEvent(_ action: Action, _ before: SystemMessage?, _ after: SystemMessage, reason: String?) throws
    -> AuditRecord
{
    AuditRecord(
        action: action, tenantID: platformTenantID, targetType: "system_message", targetID: after.id.text,
        reason: reason,
        before: try before?.snapshot, after: try after.snapshot)
}

extension SystemMessage: NewestFirst {
    package var listedAt: Date { createdAt }
}
