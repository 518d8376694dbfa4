import BackofficePlatform
import Foundation
import PostgresNIO

/// A manager drafts a system message (`messages.create`). Nothing shows until it is published.
/// A maintenance notice needs its window (start before end); other messages have none.
package struct CreateMessage: AuditedOperation {
    package static let action: Action = "messages.create"
    package let title: String
    package let body: String
    package let severity: SystemMessage.Severity
    package let audience: SystemMessage.Audience
    package let publishAt: Date?
    package let expiresAt: Date?
    package let windowStartsAt: Date?
    package let windowEndsAt: Date?

    package init(
        title: String, body: String, severity: SystemMessage.Severity, audience: SystemMessage.Audience = .all,
        publishAt: Date? = nil,
        expiresAt: Date? = nil, windowStartsAt: Date? = nil, windowEndsAt: Date? = nil
    ) {
        self.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        (
            self.body, self.severity, self.audience, self.publishAt, self.expiresAt, self.windowStartsAt,
            self.windowEndsAt
        ) = (body, severity, audience, publishAt, expiresAt, windowStartsAt, windowEndsAt)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<SystemMessage> {
        var validation = Validation()
        validation.text(title, "title", max: 200)
        validation.text(body, "body", max: 20000)
        if let expiresAt {
            validation.require(expiresAt > unit.now, "expires_at", "in_the_past", "must be in the future")
            if let publishAt {
                validation.require(expiresAt > publishAt, "expires_at", "before_publish_at", "must be after publish_at")
            }
        }
        if severity == .maintenance {
            validation.require(
                windowStartsAt != nil, "window_starts_at", "required", "is required for a maintenance notice")
            validation.require(
                windowEndsAt != nil, "window_ends_at", "required", "is required for a maintenance notice")
            if let windowStartsAt, let windowEndsAt {
                validation.require(
                    windowEndsAt > windowStartsAt, "window_ends_at", "before_window_start",
                    "must be after window_starts_at")
            }
        } else {
            validation.require(
                windowStartsAt == nil, "window_starts_at", "not_allowed", "only a maintenance notice has a window")
            validation.require(
                windowEndsAt == nil, "window_ends_at", "not_allowed", "only a maintenance notice has a window")
        }
        try validation.check()
        let created = try await unit.one(
            """
            INSERT INTO system_messages (id, title, body, severity, audience, publish_at, expires_at,
                window_starts_at, window_ends_at, created_by, created_at, updated_at)
            VALUES (\(unit.newID()), \(title), \(body), \(severity.rawValue), \(audience.rawValue), \(publishAt),
                \(expiresAt),
                    \(windowStartsAt), \(windowEndsAt), \(unit.principal.operatorID), \(unit.now), \(unit.now))
            RETURNING \(unescaped: SystemMessage.columns)
            """, as: SystemMessage.self, else: DomainError.inconsistent("the new message was not returned"))
        return Audited(created, event: try messageEvent(Self.action, nil, created, reason: nil))
    }
}

/// A manager publishes a draft (`messages.publish`): it shows from `publish_at` (now when absent
/// or past) until `expires_at`, with no job to move it. A maintenance notice must be published at
/// least the notice period of `policies/messages.yaml` before its window starts (422
/// `notice_period_too_short`). Publishing anything but a draft is 409 `invalid_transition`.
package struct PublishMessage: AuditedOperation {
    package static let action: Action = "messages.publish"
    package let messageID: UUID
    package let ifMatch: String?

    package init(messageID: UUID, ifMatch: String? = nil) {
        self.messageID = messageID
        self.ifMatch = ifMatch
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<SystemMessage> {
        let before = try await SystemMessage.fetch(messageID, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        guard before.status == .draft else {
            let state = before.state(at: unit.now).rawValue
            throw DomainError.invalidTransition(
                "Only a draft can be published; this message is \(state).", current: state)
        }
        let publishAt = max(before.publishAt ?? unit.now, unit.now)
        if let expiresAt = before.expiresAt, expiresAt <= publishAt {
            throw DomainError.invalid("expires_at", "in_the_past", "the message would expire before it shows")
        }
        if before.severity == .maintenance, let windowStartsAt = before.windowStartsAt {
            let hours = unit.policies.messages.maintenanceNoticeHours
            if windowStartsAt.timeIntervalSince(publishAt) < Double(hours) * 3600 {
                throw DomainError.unprocessable(
                    code: "notice_period_too_short",
                    detail:
                        """
                        A maintenance notice must show at least \(hours) h before its window starts \
                        (policies/messages.yaml).
                        """,
                    issues: [
                        FieldIssue(
                            field: "window_starts_at", code: "notice_period_too_short",
                            message: "is less than \(hours) h after publication")
                    ])
            }
        }
        let after = try await unit.one(
            """
            UPDATE system_messages SET status = 'published', publish_at = \(publishAt), version = version + 1,
                updated_at = \(unit.now)
            WHERE id = \(messageID) RETURNING \(unescaped: SystemMessage.columns)
            """, as: SystemMessage.self, else: DomainError.notFound("Message \(messageID.text)"))
        return Audited(after, event: try messageEvent(Self.action, before, after, reason: nil))
    }
}

/// A manager withdraws a scheduled or showing message for good (`messages.retract`, reason
/// required). A draft, an expired or a retracted message is 409 `invalid_transition`.
package struct RetractMessage: AuditedOperation {
    package static let action: Action = "messages.retract"
    package let messageID: UUID
    package let reason: String?
    package let ifMatch: String?

    package init(messageID: UUID, reason: String?, ifMatch: String? = nil) {
        self.messageID = messageID
        self.reason = reason
        self.ifMatch = ifMatch
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<SystemMessage> {
        let reason = try requireReason(reason)
        let before = try await SystemMessage.fetch(messageID, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        let state = before.state(at: unit.now)
        guard state == .scheduled || state == .published else {
            throw DomainError.invalidTransition(
                "Only a scheduled or showing message can be retracted; this one is \(state.rawValue).",
                current: state.rawValue)
        }
        let after = try await unit.one(
            """
            UPDATE system_messages SET status = 'retracted', retracted_at = \(unit.now), retract_reason = \(reason),
                version = version + 1, updated_at = \(unit.now)
            WHERE id = \(messageID) RETURNING \(unescaped: SystemMessage.columns)
            """, as: SystemMessage.self, else: DomainError.notFound("Message \(messageID.text)"))
        return Audited(after, event: try messageEvent(Self.action, before, after, reason: reason))
    }
}
