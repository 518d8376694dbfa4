import Foundation
import PostgresNIO
import BackofficePlatform

/// A moderator decides an open case (`moderation.decide`): dismiss it (ground `none`), remove the
/// content, warn the author (and remove it) or lock the author's account (and remove it), with a
/// ground of the policy and an explanation, both quoted in the statement of reasons. A lock goes
/// through the accounts' own `TransitionAccount` in the same transaction: one case, one decision,
/// one lock, each with its audit event. A case another moderator holds is 409 `assigned_to_other`.
/// A decision names the case's version it was made on (`ifMatch`, 428 without): a case changed
/// since (a new screen rewrote its text, a report raised it) is 412, so nobody decides on a text
/// they never saw.
package struct DecideCase: AuditedOperation {
    package static let action: Action = "moderation.decide"
    let caseID: UUID
    let kind: DecisionKind
    let ground: String
    let explanation: String
    /// When a lock lifts itself (nil: until a manager unlocks it); for `lock` only.
    let lockUntil: Date?
    /// The case's version the decision was made on (its ETag).
    let ifMatch: String?

    package init(
        caseID: UUID, kind: DecisionKind, ground: String, explanation: String, lockUntil: Date? = nil,
        ifMatch: String?
    ) {
        (self.caseID, self.kind, self.ground, self.lockUntil, self.ifMatch) = (
            caseID, kind, ground, lockUntil, ifMatch
        )
        self.explanation = explanation.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The decision and the case it closed.
    package struct Decided: Sendable {
        package let decision: ModerationDecision
        package let moderationCase: ModerationCase
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Decided> {
        let policy = unit.policies.moderation
        var validation = Validation()
        validation.require(
            DecisionKind.moderators.contains(kind), "decision", "not_a_moderators_decision",
            "must be dismiss, remove, warn or lock")
        validation.require(
            policy.ground(ground) != nil, "ground", "unknown_ground",
            "must be one of: \(policy.grounds.map(\.code).joined(separator: ", "))")
        validation.require(
            (ground == "none") == (kind == .dismiss), "ground", "ground_does_not_fit",
            "a dismissal's ground is none, and only a dismissal's")
        validation.text(explanation, "explanation", max: 4000)
        validation.require(lockUntil == nil || kind == .lock, "lock_until", "not_allowed", "only a lock has an end")
        try validation.check()
        let before = try await ModerationCase.fetch(caseID, forUpdate: true, in: unit)
        guard before.isOpen else {
            throw DomainError.invalidTransition("The case is already decided.", current: "decided")
        }
        try await TakeCase.refuseIfHeldByOther(before, in: unit)
        // `*` names no version: a decision must say which text it was made on.
        guard let ifMatch, ifMatch.trimmingCharacters(in: .whitespaces) != "*" else {
            throw DomainError.preconditionRequired
        }
        try EntityTag.check(ifMatch, version: Int64(before.version))
        var events: [AuditRecord] = []
        var lockID: UUID?
        if kind == .lock {
            guard let author = before.authorID else {
                throw DomainError.invalidTransition(
                    "The author's account was purged: there is no one to lock.", current: "purged")
            }
            let locked = try await TransitionAccount(
                customerID: author, move: .lock, reason: "moderation case \(caseID.text): \(ground)",
                until: lockUntil
            ).perform(in: unit)
            lockID = locked.output.lock?.id
            events += locked.events
        }
        let decision = try await ModerationDecision.record(
            kind, on: before, ground: ground, facts: try await facts(before, in: unit), explanation: explanation,
            lockID: lockID, in: unit)
        let after = try await unit.one(
            """
            UPDATE moderation_cases SET status = 'decided', decided_at = \(unit.now), assigned_to = NULL,
                assigned_until = NULL, version = version + 1
            WHERE id = \(caseID) RETURNING \(unescaped: ModerationCase.columns)
            """, as: ModerationCase.self, else: DomainError.inconsistent("the case was not returned"))
        ServiceMetrics.moderationDecided(kind.rawValue, after: unit.now.timeIntervalSince(before.openedAt))
        let event = try after.event(Self.action, reason: "\(kind.rawValue) (\(ground)): \(explanation)", before: before)
        return Audited(Decided(decision: decision, moderationCase: after), event: event, more: events)
    }

    /// What the case rests on, in words: the screen's matches and the customers' reports.
    private func facts(_ moderationCase: ModerationCase, in unit: UnitOfWork) async throws -> String {
        var facts: [String] = []
        let kind = moderationCase.contentKind.rawValue
        if !moderationCase.matchedRules.isEmpty {
            facts.append(ModerationCase.screenFacts(moderationCase.matchedRules, in: moderationCase.contentKind))
        }
        let reasons = try await unit.all(
            "SELECT reason, count(*) FROM moderation_reports WHERE case_id = \(moderationCase.id) GROUP BY 1 ORDER BY 1"
        ) { row in try row.decode((String, Int64).self) }
        if !reasons.isEmpty {
            let total = reasons.reduce(0) { $0 + $1.1 }
            let list = reasons.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")
            facts.append("\(total) customer\(total == 1 ? "" : "s") reported the \(kind): \(list).")
        }
        facts.append("A moderator reviewed the \(kind) as it was shown.")
        return facts.joined(separator: " ")
    }
}
