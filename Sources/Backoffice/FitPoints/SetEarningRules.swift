import BackofficePlatform
import Foundation
import PostgresNIO

/// A manager sets new earning rules (`fitpoints_rules.set`): they become the next version and
/// apply to activity ingested from then on. Rules identical to the current ones set nothing.
///
/// The rules decide what every customer earns, so `policies/approvals.yaml` may hold any change of
/// them for a second person's approval (with its `reason`).
package struct SetEarningRules: ApprovalGated {
    package static let action: Action = "fitpoints_rules.set"
    package enum Outcome: Sendable { case set, unchanged }
    package let draft: EarningRules.Draft
    /// Why (recorded with the approval request when the change is held).
    package let reason: String?
    /// The version in force when the change was asked for approval (0: none), so that approving it
    /// after someone else changed the rules is refused (409 `rules_changed`) rather than undoing that.
    package private(set) var basedOn: Int?

    package init(_ draft: EarningRules.Draft, reason: String? = nil) { (self.draft, self.reason) = (draft, reason) }

    package func resolved(in unit: UnitOfWork) async throws -> SetEarningRules {
        var resolved = self
        resolved.basedOn = try await EarningRuleSet.current(in: unit)?.version ?? 0
        return resolved
    }

    package var approvalAmount: Int64? { nil }
    package var approvalTarget: (type: String, id: String) { ("fitpoints_rules", "next") }
    package var approvalReason: String? { reason }
    /// The rules as drafted, one clause each (`steps 0.01 a unit, at most 100 a day`); past 500
    /// characters only their counts (the request's `change` holds them all).
    package var approvalSummary: String {
        let number = { (value: Double) in
            value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
        let metrics = draft.metrics.map { rule in
            "\(rule.metric) \(number(rule.pointsPerUnit)) a unit, at most \(rule.dailyCap.map(number) ?? "?") a day"
                + (rule.minIntensity.map { " (\($0) or harder)" } ?? "")
        }
        let awards = (draft.badges.map { ("badge", $0) } + draft.events.map { ("event", $0) }).map {
            "\($0.0) \($0.1.name) \(number($0.1.points))"
        }
        let clauses = metrics + awards
        let text = "Set the earning rules: " + (clauses.isEmpty ? "none" : clauses.joined(separator: "; "))
        guard text.count > 500 else { return text }
        return "Set the earning rules: \(metrics.count) metric rules, \(draft.badges.count) badge awards and "
            + "\(draft.events.count) event awards (each in the request's change)"
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(EarningRuleSet, Outcome)> {
        var validation = Validation()
        validation.text(reason, "reason", max: 1000, required: false)
        try validation.check()
        let rules = try EarningRules.validated(draft)
        // versions are only inserted: no row to lock
        try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('fitpoints_rules'))")
        let current = try await EarningRuleSet.current(in: unit)
        if let basedOn, basedOn != current?.version ?? 0 {
            throw DomainError.conflict(
                code: "rules_changed",
                detail:
                    "The earning rules changed since this was asked (version \(current?.version ?? 0) is in force): "
                    + "ask again from the rules in force.")
        }
        if let current, current.rules == rules { return .unchanged((current, .unchanged)) }
        let version = (current?.version ?? 0) + 1
        let created = try await unit.one(
            """
            INSERT INTO fitpoints_rule_sets (version, rules, created_by, created_at)
            VALUES (\(version), \(try rules.json)::jsonb, \(unit.principal.operatorID), \(unit.now))
            RETURNING \(unescaped: EarningRuleSet.columns)
            """, as: EarningRuleSet.self, else: DomainError.inconsistent("the new rules were not returned"))
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "fitpoints_rules", targetID: String(version),
            reason: reason?.trimmingCharacters(in: .whitespacesAndNewlines),
            before: try current.map { #"{"version":\#($0.version),"rules":\#(try $0.rules.json)}"# },
            after: #"{"version":\#(version),"rules":\#(try rules.json)}"#)
        return Audited((created, .set), event: event)
    }
}
