import BackofficePlatform
import Foundation
import PostgresNIO

/// The note and the schedule of one version as written.
package struct PlanContent: Sendable, Equatable {
    package var note: String
    package var schedule: PlanSchedule
    /// Whether the writer sent both days and weeks (refused: a plan is one or the other).
    package var sentBoth = false

    package init(note: String, schedule: PlanSchedule) {
        self.note = note.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\r\n", with: "\n")
        self.schedule = schedule
    }

    /// Refuses content that breaks a rule (naming each field), or whose schedule is of another
    /// kind than `kind` (422 `kind_mismatch`).
    func validate(for kind: PlanKind) throws {
        var validation = Validation()
        validation.text(note, "note", max: 4000)
        validation.require(
            schedule.kind == kind, kind == .meal ? "days" : "weeks", "kind_mismatch",
            kind == .meal ? "a meal plan is days of meals" : "an exercise plan is weeks of sessions")
        validation.require(
            !sentBoth, "weeks", "days_or_weeks", "a plan is days of meals or weeks of sessions, not both")
        if schedule.kind == kind { schedule.validate(into: &validation) }
        try validation.check()
    }

    /// Stores this content, its items resolved against the live catalogs, as `version` of `planID`,
    /// checked against `calorieGoal`.
    func store(as version: Int, of planID: UUID, calorieGoal: Int?, in unit: UnitOfWork) async throws {
        let resolved = try await schedule.resolved(in: unit)
        try await unit.execute(
            """
            INSERT INTO plan_versions (plan_id, version, note, schedule, calorie_goal, written_by, written_at)
            VALUES (\(planID), \(Int32(version)), \(note), \(try resolved.stored)::jsonb,
                \(calorieGoal.map(Int32.init)), \(unit.principal.operatorID), \(unit.now))
            """)
    }
}

/// An expert answers a request it holds with a plan (`plans.create`): the first version, of the
/// request's kind, checked against the request's calorie goal; the request names the plan. Only
/// the holder writes it (409 `not_held`); a request already answered by a plan is 409
/// `plan_exists` (change it instead); a change request is answered by a new version of its plan.
package struct CreatePlan: AuditedOperation {
    package static let action: Action = "plans.create"
    let requestID: UUID
    let content: PlanContent

    package init(requestID: UUID, content: PlanContent) { (self.requestID, self.content) = (requestID, content) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Plan> {
        let request = try await PlanRequest.fetch(requestID, forUpdate: true, in: unit)
        try content.validate(for: request.kind)
        guard !request.isAnswered, request.holder(at: unit.now) == unit.principal.operatorID else {
            throw DomainError.conflict(
                code: "not_held", detail: "Take the request first: a plan answers a request its writer holds.")
        }
        guard request.planID == nil, request.changeOf == nil else {
            throw DomainError.conflict(
                code: "plan_exists", detail: "The request has its plan: save a new version of it instead.")
        }
        let id = unit.newID()
        try await unit.execute(
            """
            INSERT INTO plans (id, customer_id, kind, author_id, version, created_at, updated_at, updated_by)
            VALUES (\(id), \(request.customerID), \(request.kind.rawValue), \(unit.principal.operatorID), 1,
                \(unit.now), \(unit.now), \(unit.principal.operatorID))
            """)
        try await content.store(as: 1, of: id, calorieGoal: request.dailyCalorieGoal, in: unit)
        try await unit.execute(
            "UPDATE plan_requests SET plan_id = \(id), version = version + 1 WHERE id = \(requestID)")
        let plan = try await Plan.fetch(id, in: unit)
        return Audited(plan, event: try plan.event(Self.action, before: nil))
    }
}

/// The holder of a request for a plan saves a new version of it (`plans.update`): `If-Match` is
/// required (428) and must name the newest version (412); the version is checked against the
/// calorie goal of the request it answers (a change request's own goal).
package struct UpdatePlan: AuditedOperation {
    package static let action: Action = "plans.update"
    let id: UUID
    let content: PlanContent
    let ifMatch: String?

    package init(id: UUID, content: PlanContent, ifMatch: String?) {
        (self.id, self.content, self.ifMatch) = (id, content, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Plan> {
        let before = try await Plan.fetch(id, forUpdate: true, in: unit)
        guard let ifMatch else { throw DomainError.preconditionRequired }
        try EntityTag.check(ifMatch, version: Int64(before.version))
        try content.validate(for: before.kind)
        let request = try await PlanRequest.heldAnswering(before, in: unit)
        let version = before.version + 1
        try await content.store(as: version, of: id, calorieGoal: request.dailyCalorieGoal, in: unit)
        try await unit.execute(
            """
            UPDATE plans SET version = \(Int32(version)), updated_at = \(unit.now),
                updated_by = \(unit.principal.operatorID)
            WHERE id = \(id)
            """)
        let after = try await Plan.fetch(id, in: unit)
        return Audited(after, event: try after.event(Self.action, before: before))
    }
}

/// The holder sends the plan's newest version to the customer (`plans.send`): the app reads it
/// from then on, and the request it answers is answered. A version sent already is 409
/// `already_sent` (a change is sent as a new version); `If-Match`, when sent, must name the newest
/// version (412). The days' warnings do not stop it: the expert decides.
package struct SendPlan: AuditedOperation {
    package static let action: Action = "plans.send"
    let id: UUID
    let ifMatch: String?

    package init(id: UUID, ifMatch: String? = nil) { (self.id, self.ifMatch) = (id, ifMatch) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Plan> {
        let before = try await Plan.fetch(id, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: Int64(before.version))
        let request = try await PlanRequest.heldAnswering(before, in: unit)
        guard before.sentVersion != before.version else {
            throw DomainError.conflict(code: "already_sent", detail: "This version was sent: save a new one first.")
        }
        try await unit.execute(
            """
            UPDATE plans SET sent_version = version, sent_at = \(unit.now), updated_at = \(unit.now),
                updated_by = \(unit.principal.operatorID)
            WHERE id = \(id)
            """)
        let answered = try await unit.one(
            """
            UPDATE plan_requests SET status = 'answered', answered_at = \(unit.now), plan_id = \(id),
                version = version + 1
            WHERE id = \(request.id) RETURNING \(unescaped: PlanRequest.columns)
            """, as: PlanRequest.self, else: DomainError.inconsistent("the request was not returned"))
        let after = try await Plan.fetch(id, in: unit)
        return Audited(
            after, event: try after.event(Self.action, before: before),
            more: [try answered.event(Self.action, before: request)])
    }
}
