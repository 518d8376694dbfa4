import Foundation
import PostgresNIO
import BackofficePlatform

/// The content a screen or a report is about, as the app shows it.
package struct ForumContent: Sendable {
    package let kind: ContentKind
    package let id: String
    package let text: String
    package let authorID: UUID

    package init(kind: ContentKind, id: String, text: String, authorID: UUID) {
        (self.kind, self.id, self.text, self.authorID) = (kind, id.trimmingCharacters(in: .whitespaces), text, authorID)
    }

    /// 422 naming each field out of bounds: an id of 1–200 characters, a text of 1–10,000.
    func validate() throws {
        var validation = Validation()
        validation.text(id, "content_id", max: 200)
        validation.require(
            !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "text", "required", "must not be blank")
        validation.require(text.count <= 10_000, "text", "too_long", "at most 10,000 characters")
        try validation.check()
    }

    /// The open case of this content, or a new one opened now (a concurrent opening is folded in).
    func openCase(origin: CaseOrigin, severity: Int, rules: [String], in unit: UnitOfWork) async throws
        -> (ModerationCase, opened: Bool)
    {
        _ = try await Customer.fetch(authorID, in: unit)  // 404 for an author the back office does not know
        let inserted = try await unit.first(
            """
            INSERT INTO moderation_cases (id, content_kind, content_id, content_text, author_id, opened_by, severity,
                matched_rules, opened_at)
            VALUES (\(unit.newID()), \(kind.rawValue), \(id), \(text), \(authorID), \(origin.rawValue),
                \(Int16(severity)), \(rules), \(unit.now))
            ON CONFLICT (content_kind, content_id) WHERE status = 'open' DO NOTHING
            RETURNING \(unescaped: ModerationCase.columns)
            """, as: ModerationCase.self)
        if let inserted { return (inserted, true) }
        guard let open = try await ModerationCase.open(kind, id, in: unit) else {
            throw DomainError.contention
        }
        return (open, false)
    }
}

/// The app screens a new post or comment (`moderation.screen`) against the term files: allow
/// (nothing written), mask (a case closed at once by the screen's `mask` decision) or hold (an
/// open case in the queue, with the screen's `hold` decision). Each recorded decision keeps the
/// moderation policy's digest and is audited; the answer names the matched rules.
package struct ScreenContent: AuditedOperation {
    package static let action: Action = "moderation.screen"
    let content: ForumContent

    package init(_ content: ForumContent) { self.content = content }

    package struct Outcome: Sendable {
        package let verdict: ScreenVerdict
        /// The case that records a mask or a hold (nil for allow).
        package let caseID: UUID?
        package let policyDigest: String
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Outcome> {
        try content.validate()
        let policy = unit.policies.moderation
        let verdict = policy.screen.screen(content.text)
        guard verdict.action != .allow else {
            return .unchanged(Outcome(verdict: verdict, caseID: nil, policyDigest: policy.digest))
        }
        let kind: DecisionKind = verdict.action == .hold ? .hold : .mask
        let severity = kind == .hold ? max(policy.heldSeverity, verdict.severity ?? 1) : 1
        let (found, opened) = try await content.openCase(
            origin: .screen, severity: severity, rules: verdict.ruleIDs, in: unit)
        var moderationCase = found
        if !opened {  // a case already open (reported, or held before) takes this text and these rules
            moderationCase = try await unit.one(
                """
                UPDATE moderation_cases SET content_text = \(content.text),
                    matched_rules = ARRAY(
                        SELECT DISTINCT unnest(matched_rules || \(verdict.ruleIDs)::text[]) ORDER BY 1),
                    severity = greatest(severity, \(Int16(severity))), version = version + 1
                WHERE id = \(found.id) RETURNING \(unescaped: ModerationCase.columns)
                """, as: ModerationCase.self, else: DomainError.inconsistent("the case was not returned"))
        }
        let decision = try await ModerationDecision.record(
            kind, on: moderationCase, ground: verdict.ruleIDs.joined(separator: ","),
            facts: ModerationCase.screenFacts(verdict.ruleIDs, in: content.kind),
            explanation: kind == .hold
                ? "Held for a moderator's review: the text matched a rule that needs a person to decide."
                : "Published with the matched words masked.",
            in: unit)
        if kind == .mask, opened {  // a mask alone decides the case it opened
            moderationCase = try await unit.one(
                """
                UPDATE moderation_cases SET status = 'decided', decided_at = \(unit.now)
                WHERE id = \(moderationCase.id) RETURNING \(unescaped: ModerationCase.columns)
                """, else: DomainError.inconsistent("the case was not returned"))
        }
        let event = try moderationCase.event(
            Self.action, reason: "\(kind.rawValue): \(verdict.ruleIDs.joined(separator: ", "))",
            before: opened ? nil : found)
        ServiceMetrics.moderationDecided(decision.kind.rawValue)
        return Audited(Outcome(verdict: verdict, caseID: moderationCase.id, policyDigest: policy.digest), event: event)
    }
}

/// The app reports content a customer flagged (`moderation.report`): the reason must be one of
/// the policy's; reports of the same content fold into its open case (opened if none), which takes
/// the most severe reason; a reporter reporting it again counts once (and changes nothing).
/// Content a moderator already removed is not reopened.
package struct ReportContent: AuditedOperation {
    package static let action: Action = "moderation.report"
    let content: ForumContent
    let reporterID: UUID
    let reason: String

    package init(_ content: ForumContent, reporterID: UUID, reason: String) {
        (self.content, self.reporterID, self.reason) = (content, reporterID, reason)
    }

    package struct Outcome: Sendable {
        package let moderationCase: ModerationCase
        /// Whether this report counted (false: the reporter had reported it, or it is removed).
        package let counted: Bool
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Outcome> {
        try content.validate()
        guard let reason = unit.policies.moderation.reason(self.reason) else {
            let codes = unit.policies.moderation.reportReasons.map(\.code).joined(separator: ", ")
            throw DomainError.invalid("reason", "unknown_reason", "must be one of: \(codes)")
        }
        guard reporterID != content.authorID else {
            throw DomainError.invalid("reporter_id", "reporter_is_author", "an author cannot report its own content")
        }
        if let removed = try await unit.first(
            """
            SELECT \(unescaped: ModerationCase.columns) FROM moderation_cases c
            WHERE content_kind = \(content.kind.rawValue) AND content_id = \(content.id) AND status = 'decided'
                AND overturned_at IS NULL AND EXISTS (SELECT 1 FROM moderation_decisions d
                    WHERE d.case_id = c.id AND d.removes_content)
            LIMIT 1
            """, as: ModerationCase.self)
        {
            return .unchanged(Outcome(moderationCase: removed, counted: false))
        }
        let (found, opened) = try await content.openCase(
            origin: .report, severity: reason.severity, rules: [], in: unit)
        let counted =
            try await unit.first(
                """
                INSERT INTO moderation_reports (case_id, reporter_id, reason, reported_at)
                VALUES (\(found.id), \(reporterID), \(reason.code), \(unit.now))
                ON CONFLICT DO NOTHING RETURNING 1
                """, { _ in true }) ?? false
        guard counted else { return .unchanged(Outcome(moderationCase: found, counted: false)) }
        let after = try await unit.one(
            """
            UPDATE moderation_cases SET report_count = report_count + 1,
                severity = greatest(severity, \(Int16(reason.severity))), version = version + \(opened ? 0 : 1)
            WHERE id = \(found.id) RETURNING \(unescaped: ModerationCase.columns)
            """, as: ModerationCase.self, else: DomainError.inconsistent("the case was not returned"))
        let event = try after.event(Self.action, reason: reason.code, before: opened ? nil : found)
        return Audited(Outcome(moderationCase: after, counted: true), event: event)
    }
}

/// A moderator takes an open case (`moderation.take`) for the policy's assignment minutes: others
/// may read it but not decide it until the hold expires. Taking a case someone else holds is 409
/// `assigned_to_other`; taking one's own again extends the hold.
package struct TakeCase: AuditedOperation {
    package static let action: Action = "moderation.take"
    let caseID: UUID

    package init(caseID: UUID) { self.caseID = caseID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ModerationCase> {
        let before = try await ModerationCase.fetch(caseID, forUpdate: true, in: unit)
        guard before.isOpen else {
            throw DomainError.invalidTransition("The case is already decided.", current: "decided")
        }
        try await Self.refuseIfHeldByOther(before, in: unit)
        let until = unit.now.addingTimeInterval(Double(unit.policies.moderation.assignmentMinutes) * 60)
        let after = try await unit.one(
            """
            UPDATE moderation_cases SET assigned_to = \(unit.principal.operatorID), assigned_until = \(until),
                version = version + 1
            WHERE id = \(caseID) RETURNING \(unescaped: ModerationCase.columns)
            """, as: ModerationCase.self, else: DomainError.inconsistent("the case was not returned"))
        let event = try after.event(Self.action, reason: nil, before: before)
        return Audited(after, event: event)
    }

    /// 409 `assigned_to_other` when another moderator holds `moderationCase` now, naming who and until when.
    static func refuseIfHeldByOther(_ moderationCase: ModerationCase, in unit: UnitOfWork) async throws {
        guard let holder = moderationCase.holder(at: unit.now), holder != unit.principal.operatorID else { return }
        let email = try await unit.first(
            "SELECT email FROM operators WHERE id = \(holder)", { try $0.decode(String.self) })
        let until = moderationCase.assignedUntil?.formatted(.iso8601) ?? ""
        throw DomainError.conflict(
            code: "assigned_to_other",
            detail: "\(email ?? "Another moderator") holds this case until \(until); it is read-only for you.")
    }
}
