import BackofficePlatform
import Foundation
import PostgresNIO

/// The app files a customer's request for a plan (`plans.request`): a first request of a kind
/// (one waiting per customer and kind: 409 `request_waiting`), or a change asked of a plan the
/// customer was sent (`changeOf`: once per plan, 409 `change_asked`). A meal plan's request names
/// the calorie goal a day its days are checked against. It waits in its kind's queue, oldest first.
package struct FilePlanRequest: AuditedOperation {
    package static let action: Action = "plans.request"
    let customerID: UUID
    let kind: PlanKind
    let goal: String
    let dailyCalorieGoal: Int?
    let changeOf: UUID?

    package init(customerID: UUID, kind: PlanKind, goal: String, dailyCalorieGoal: Int?, changeOf: UUID? = nil) {
        (self.customerID, self.kind, self.dailyCalorieGoal, self.changeOf) =
            (customerID, kind, dailyCalorieGoal, changeOf)
        self.goal = goal.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<PlanRequest> {
        var validation = Validation()
        validation.text(goal, "goal", max: 1000)
        if let dailyCalorieGoal {
            validation.require(
                (500...10_000).contains(dailyCalorieGoal), "daily_calorie_goal", "out_of_range", "must be 500–10000")
        } else {
            validation.require(
                kind != .meal, "daily_calorie_goal", "required", "a meal plan's request names the calorie goal a day")
        }
        try validation.check()
        let customer = try await Customer.fetch(customerID, in: unit)
        guard customer.status != .deleted else { throw DomainError.notFound("Customer \(customerID.text)") }
        if let changeOf { try await Self.checkChangeable(changeOf, of: customerID, kind: kind, in: unit) }
        let request = try await unit.first(
            """
            INSERT INTO plan_requests (id, customer_id, kind, goal, daily_calorie_goal, change_of, status, filed_at)
            VALUES (\(unit.newID()), \(customerID), \(kind.rawValue), \(goal), \(dailyCalorieGoal.map(Int32.init)),
                \(changeOf), 'waiting', \(unit.now))
            ON CONFLICT DO NOTHING
            RETURNING \(unescaped: PlanRequest.columns)
            """, as: PlanRequest.self)
        guard let request else {
            throw changeOf == nil
                ? DomainError.conflict(
                    code: "request_waiting", detail: "The customer's request for a \(kind.rawValue) plan is waiting.")
                : DomainError.conflict(code: "change_asked", detail: "A change of this plan was asked already.")
        }
        return Audited(request, event: try request.event(Self.action, before: nil))
    }

    /// 404 unless `planID` is a plan of this customer; 409 `not_sent` unless it was sent, 422 when
    /// its kind is another.
    static func checkChangeable(_ planID: UUID, of customerID: UUID, kind: PlanKind, in unit: UnitOfWork)
        async throws
    {
        let plan = try await Plan.fetch(planID, in: unit)
        guard plan.customerID == customerID else { throw DomainError.notFound("Plan \(planID.text)") }
        guard plan.sentVersion != nil else {
            throw DomainError.conflict(code: "not_sent", detail: "A change is asked of a plan the customer was sent.")
        }
        guard plan.kind == kind else {
            throw DomainError.invalid("kind", "kind_mismatch", "the plan is a \(plan.kind.rawValue) plan")
        }
    }
}

/// An expert (or a manager) takes a waiting request (`plans.take`) for 30 minutes, as a moderator
/// takes a case: while held, other experts do not see it and the holder may read the customer's
/// health profile with the purpose `plan`. A request another holds is 409 `assigned_to_other` (an
/// expert sees 404: it does not see the request); taking one's own again extends the hold; an
/// answered request is 409.
package struct TakePlanRequest: AuditedOperation {
    package static let action: Action = "plans.take"
    /// How long a take holds a request.
    package static let holdMinutes = 30
    let requestID: UUID

    package init(requestID: UUID) { self.requestID = requestID }

    package func perform(in unit: UnitOfWork) async throws -> Audited<PlanRequest> {
        let before = try await PlanRequest.fetch(requestID, forUpdate: true, in: unit)
        guard !before.isAnswered else {
            throw DomainError.invalidTransition("The request is answered.", current: "answered")
        }
        if let holder = before.holder(at: unit.now), holder != unit.principal.operatorID {
            throw DomainError.conflict(
                code: "assigned_to_other", detail: "Another expert holds this request until \(before.heldUntil!).")
        }
        let until = unit.now.addingTimeInterval(Double(Self.holdMinutes) * 60)
        let after = try await unit.one(
            """
            UPDATE plan_requests SET held_by = \(unit.principal.operatorID), held_until = \(until),
                version = version + 1
            WHERE id = \(requestID) RETURNING \(unescaped: PlanRequest.columns)
            """, as: PlanRequest.self, else: DomainError.inconsistent("the request was not returned"))
        return Audited(after, event: try after.event(Self.action, before: before))
    }
}
