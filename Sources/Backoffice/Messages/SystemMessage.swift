import Foundation

/// A message from the company to customers in the app: an announcement or a maintenance notice.
public struct SystemMessage: Sendable, Equatable {
    public enum Severity: String, Sendable, CaseIterable { case info, warning, maintenance, critical }
    public enum Audience: String, Sendable, CaseIterable { case all, subscribers, nonSubscribers = "non_subscribers" }
    /// What is stored: a draft until published, retracted for good.
    public enum Status: String, Sendable, CaseIterable { case draft, published, retracted }
    /// What a reader sees at a given time.
    public enum State: String, Sendable, CaseIterable { case draft, scheduled, published, expired, retracted }

    public var id: UUID
    public var title: String
    public var body: String
    public var severity: Severity
    public var audience: Audience
    public var publishAt: Date?
    public var expiresAt: Date?
    public var windowStartsAt: Date?
    public var windowEndsAt: Date?
    public var status: Status
    public var retractedAt: Date?
    public var retractReason: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var version: Int64

    /// The state at `now`: a published message is scheduled before `publish_at`, showing until
    /// `expires_at`, expired from then on. No job moves it: the time decides.
    public func state(at now: Date) -> State {
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
                let status: String, severity: String, audience: String, publish_at: Date?, expires_at: Date?, version: Int64
            }
            return try AuditRecord.json(
                Snapshot(
                    status: status.rawValue, severity: severity.rawValue, audience: audience.rawValue, publish_at: publishAt, expires_at: expiresAt,
                    version: version))
        }
    }
}

/// The audit record of a change to one message.
func messageEvent(_ action: Action, _ before: SystemMessage?, _ after: SystemMessage, reason: String?) throws -> AuditRecord {
    AuditRecord(
        action: action, tenantID: platformTenantID, targetType: "system_message", targetID: after.id.text, reason: reason,
        before: try before?.snapshot, after: try after.snapshot)
}
