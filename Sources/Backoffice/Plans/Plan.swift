import BackofficePlatform
import Foundation
import PostgresNIO

/// A plan made for one customer by an expert: its newest version, and which version (if any) the
/// customer has been sent.
package struct Plan: Sendable, Equatable {
    package var id: UUID
    package var customerID: UUID
    package var kind: PlanKind
    package var authorID: UUID
    package var version: Int
    package var sentVersion: Int?
    package var sentAt: Date?
    package var createdAt: Date
    package var updatedAt: Date
    package var updatedBy: UUID
    /// The newest version's note to the customer.
    package var note: String
    package var schedule: PlanSchedule
    /// The calorie goal a day the newest version was checked against (a meal plan's request's).
    package var calorieGoal: Int?
    package var writtenBy: UUID

    /// The days of a meal plan outside ±10 % of its calorie goal.
    package var warnings: [PlanWarning] {
        guard case .meals(let days) = schedule else { return [] }
        return PlanWarning.days(days, goal: calorieGoal)
    }

    /// The audit record of a change to this plan (as it now is). The note and the schedule stay in
    /// the plan's versions; the event names the version.
    func event(_ action: Action, before: Plan?) throws -> AuditRecord {
        struct Snapshot: Encodable {
            let plan_id: String, customer_id: String, kind: String, author_id: String, version: Int
            let sent_version: Int?
        }
        func snapshot(_ plan: Plan) throws -> String {
            try AuditRecord.json(
                Snapshot(
                    plan_id: plan.id.text, customer_id: plan.customerID.text, kind: plan.kind.rawValue,
                    author_id: plan.authorID.text, version: plan.version, sent_version: plan.sentVersion))
        }
        return AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "plan", targetID: id.text, reason: nil,
            before: try before.map(snapshot), after: try snapshot(self))
    }
}

extension Plan: RowDecodable {
    /// The plan's columns with its newest version's (`p` the plan, `v` the version).
    package static let columns = """
        p.id, p.customer_id, p.kind, p.author_id, p.version, p.sent_version, p.sent_at, p.created_at, p.updated_at, \
        p.updated_by, v.note, v.schedule::text, v.calorie_goal, v.written_by
        """
    /// The plans with their newest version (`columns`' FROM).
    static let source = "plans p JOIN plan_versions v ON v.plan_id = p.id AND v.version = p.version"

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "plan")
        id = try cells.next()
        customerID = try cells.next()
        kind = try PlanKind(known: cells.next(String.self))
        authorID = try cells.next()
        version = Int(try cells.next(Int32.self))
        sentVersion = try cells.next(Int32?.self).map(Int.init)
        sentAt = try cells.next()
        createdAt = try cells.next()
        updatedAt = try cells.next()
        updatedBy = try cells.next()
        note = try cells.next()
        schedule = try PlanSchedule(stored: cells.next(String.self), kind: kind)
        calorieGoal = try cells.next(Int32?.self).map(Int.init)
        writtenBy = try cells.next()
    }

    /// The plan `id` as the principal sees it (an expert: one it wrote, or whose change it holds),
    /// locked for the unit's change with `forUpdate`.
    /// - Throws: `notFound` when there is none the principal sees.
    static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Plan {
        try await unit.byID(source, alias: "p", id, forUpdate: forUpdate, notFound: "Plan \(id.text)")
    }
}

extension PlanSchedule {
    /// The stored JSON: `{"days": [...]}` or `{"weeks": [...]}`.
    struct Stored: Codable {
        var days: [MealDay]?
        var weeks: [ExerciseWeek]?
    }

    init(stored json: String, kind: PlanKind) throws {
        let stored = try JSONDecoder().decode(Stored.self, from: Data(json.utf8))
        switch kind {
        case .meal: self = .meals(stored.days ?? [])
        case .exercise: self = .exercise(stored.weeks ?? [])
        }
    }

    var stored: String {
        get throws {
            switch self {
            case .meals(let days): try AuditRecord.json(Stored(days: days))
            case .exercise(let weeks): try AuditRecord.json(Stored(weeks: weeks))
            }
        }
    }

    /// The schedule with each item resolved against the catalogs live now: a meal's recipe (its
    /// title and calories per serving × servings), a session's video (its title). A recipe or a
    /// video that is not live (or archived) is 422 `recipe_not_live` / `video_not_live` on its field.
    func resolved(in unit: UnitOfWork) async throws -> PlanSchedule {
        var validation = Validation()
        switch self {
        case .meals(var days):
            let ids = Array(Set(days.flatMap { $0.meals.map(\.recipeID) }))
            let live = try await Self.live(
                """
                SELECT r.id, v.title, v.energy_kcal FROM recipes r
                JOIN recipe_versions v ON v.recipe_id = r.id AND v.version = r.live_version
                WHERE r.id = ANY(\(ids)) AND r.state <> 'archived'
                """, in: unit)
            for d in days.indices {
                for m in days[d].meals.indices {
                    let meal = days[d].meals[m]
                    guard let (title, kcal) = live[meal.recipeID] else {
                        validation.require(
                            false, "days[\(d)].meals[\(m)].recipe_id", "recipe_not_live", "must be a live recipe")
                        continue
                    }
                    days[d].meals[m].title = title
                    days[d].meals[m].kilocalories = ((kcal ?? 0) * meal.servings * 10).rounded() / 10
                }
            }
            try validation.check()
            return .meals(days)
        case .exercise(var weeks):
            let ids = Array(Set(weeks.flatMap { $0.sessions.compactMap(\.videoID) }))
            let live = try await Self.live(
                """
                SELECT w.id, v.title, NULL::float8 FROM videos w
                JOIN video_versions v ON v.video_id = w.id AND v.version = w.live_version
                WHERE w.id = ANY(\(ids)) AND w.state <> 'archived'
                """, in: unit)
            for w in weeks.indices {
                for s in weeks[w].sessions.indices {
                    let session = weeks[w].sessions[s]
                    guard let videoID = session.videoID else {
                        weeks[w].sessions[s].title = session.exercise
                        continue
                    }
                    guard let (title, _) = live[videoID] else {
                        validation.require(
                            false, "weeks[\(w)].sessions[\(s)].video_id", "video_not_live", "must be a live video")
                        continue
                    }
                    weeks[w].sessions[s].title = title
                }
            }
            try validation.check()
            return .exercise(weeks)
        }
    }

    /// The live items a query answers: id → (title, calories per serving or nil).
    private static func live(_ query: PostgresQuery, in unit: UnitOfWork) async throws
        -> [UUID: (String, Double?)]
    {
        var found: [UUID: (String, Double?)] = [:]
        for (id, title, kcal) in try await unit.all(query, { try $0.decode((UUID, String, Double?).self) }) {
            found[id] = (title, kcal)
        }
        return found
    }
}
