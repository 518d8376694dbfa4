import BackofficePlatform
import Foundation
import PostgresNIO

/// What a plan schedules: meals from recipes, or exercise sessions from videos and exercises.
package enum PlanKind: String, Sendable, CaseIterable, Codable {
    case meal, exercise
}

/// A customer's request for a plan, filed by the app: it waits in its kind's queue (oldest first)
/// until an expert answers it with a plan. An expert takes it for a while (`PlanPolicy`'s hold):
/// others do not see it then; an expired hold puts it back in the queue.
package struct PlanRequest: Sendable, Equatable {
    package var id: UUID
    package var customerID: UUID
    package var kind: PlanKind
    /// What the customer asked for, in their words.
    package var goal: String
    /// The calorie goal a day the customer set for the plan (a meal plan's days are checked against it).
    package var dailyCalorieGoal: Int?
    /// The sent plan this request asks to change (nil for a first request).
    package var changeOf: UUID?
    package var isAnswered: Bool
    package var heldBy: UUID?
    package var heldUntil: Date?
    /// The plan that answers it (while drafted, and once sent).
    package var planID: UUID?
    package var filedAt: Date
    package var answeredAt: Date?
    package var version: Int

    /// Who holds the request at `now` (nil when nobody does, or the hold has expired).
    package func holder(at now: Date) -> UUID? {
        guard let heldBy, let heldUntil, heldUntil > now else { return nil }
        return heldBy
    }

    /// The request as the unit's principal may see it: the customer's words masked for a role that
    /// sees personal data masked (an auditor).
    func shown(to unit: UnitOfWork) -> PlanRequest {
        guard unit.context.masksPII else { return self }
        var masked = self
        masked.goal = PIIMask.text(goal)
        return masked
    }

    /// The audit record of a change to this request (as it now is). The goal and the calorie goal
    /// are the customer's health data: they never enter the audit log.
    func event(_ action: Action, before: PlanRequest?) throws -> AuditRecord {
        AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "plan_request", targetID: id.text, reason: nil,
            before: try before?.snapshot, after: try snapshot)
    }

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let request_id: String, customer_id: String, kind: String, status: String, held_by: String?
                let plan_id: String?, change_of: String?
            }
            return try AuditRecord.json(
                Snapshot(
                    request_id: id.text, customer_id: customerID.text, kind: kind.rawValue,
                    status: isAnswered ? "answered" : "waiting", held_by: heldBy?.text, plan_id: planID?.text,
                    change_of: changeOf?.text))
        }
    }
}

extension PlanRequest: RowDecodable {
    package static let columns = """
        id, customer_id, kind, goal, daily_calorie_goal, change_of, status, held_by, held_until, plan_id, filed_at, \
        answered_at, version
        """

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "plan request")
        id = try cells.next()
        customerID = try cells.next()
        kind = try PlanKind(known: cells.next(String.self))
        goal = try cells.next()
        dailyCalorieGoal = try cells.next(Int32?.self).map(Int.init)
        changeOf = try cells.next()
        isAnswered = try cells.next(String.self) == "answered"
        heldBy = try cells.next()
        heldUntil = try cells.next()
        planID = try cells.next()
        filedAt = try cells.next()
        answeredAt = try cells.next()
        version = Int(try cells.next(Int32.self))
    }

    /// The waiting request this principal holds now for `planID`'s customer and kind: the one a
    /// plan answers (a first request the plan was written for, or a change asked of it), locked.
    /// - Throws: 409 `not_held` when the principal holds none.
    static func heldAnswering(_ plan: Plan, in unit: UnitOfWork) async throws -> PlanRequest {
        let held = try await unit.first(
            """
            SELECT \(unescaped: columns) FROM plan_requests
            WHERE status = 'waiting' AND held_by = \(unit.principal.operatorID) AND held_until > \(unit.now)
              AND (plan_id = \(plan.id) OR change_of = \(plan.id))
            ORDER BY filed_at LIMIT 1 FOR UPDATE
            """, as: PlanRequest.self)
        guard let held else {
            throw DomainError.conflict(
                code: "not_held",
                detail: "Take the plan's request first: a plan changes only while its writer holds a request for it.")
        }
        return held
    }
}

/// A request is read by its id as the principal sees it (an expert: waiting in the queue, or held
/// by it; `fetch`, locked for the unit's change with `forUpdate`).
extension PlanRequest: ReadByID {
    package static let table = "plan_requests"
    package static let readAction: Action = "plans.queue"
}
