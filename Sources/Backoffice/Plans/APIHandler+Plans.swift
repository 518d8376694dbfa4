import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension PlanRequest {
    var api: Components.Schemas.PlanRequest {
        Components.Schemas.PlanRequest(
            id: id.text, customerId: customerID.text, kind: kind.api, goal: goal, dailyCalorieGoal: dailyCalorieGoal,
            changeOf: changeOf?.text, status: isAnswered ? .answered : .waiting, heldBy: heldBy?.text,
            heldUntil: heldUntil, planId: planID?.text, filedAt: filedAt, answeredAt: answeredAt, version: version)
    }
}

extension PlanKind {
    var api: Components.Schemas.PlanKind { self == .meal ? .meal : .exercise }
    init(_ api: Components.Schemas.PlanKind) { self = api == .meal ? .meal : .exercise }
}

extension PlanSchedule {
    /// The days and weeks as answered (one of them absent).
    var api: (days: [Components.Schemas.PlanDay]?, weeks: [Components.Schemas.PlanWeek]?) {
        switch self {
        case .meals(let days):
            let answered = days.enumerated().map { index, day in
                Components.Schemas.PlanDay(
                    day: index + 1, kcal: day.kilocalories,
                    meals: day.meals.map {
                        .init(
                            meal: $0.meal, recipeId: $0.recipeID.text, title: $0.title ?? "", servings: $0.servings,
                            kcal: $0.kilocalories ?? 0)
                    })
            }
            return (answered, nil)
        case .exercise(let weeks):
            let answered = weeks.enumerated().map { index, week in
                Components.Schemas.PlanWeek(
                    week: index + 1, minutes: week.minutes,
                    sessions: week.sessions.map {
                        .init(
                            day: $0.day, videoId: $0.videoID?.text, exercise: $0.exercise, title: $0.title ?? "",
                            minutes: $0.minutes)
                    })
            }
            return (nil, answered)
        }
    }

    /// The schedule a draft sends: `days` for a meal plan, `weeks` for an exercise plan. Neither is
    /// an empty meal plan and both a meal plan that says so: the use case refuses either (422), after
    /// the permission is checked.
    init(days: [Components.Schemas.PlanDayDraft]?, weeks: [Components.Schemas.PlanWeekDraft]?) throws {
        if let weeks, days == nil {
            self = .exercise(
                try weeks.enumerated().map { w, week in
                    ExerciseWeek(
                        sessions: try week.sessions.enumerated().map { s, session in
                            PlannedSession(
                                day: session.day,
                                videoID: try session.videoId.map {
                                    try parseID($0, "weeks[\(w)].sessions[\(s)].video_id")
                                },
                                exercise: session.exercise, minutes: session.minutes)
                        })
                })
            return
        }
        self = .meals(
            try (days ?? []).enumerated().map { d, day in
                MealDay(
                    meals: try day.meals.enumerated().map { m, meal in
                        PlannedMeal(
                            meal: meal.meal.rawValue,
                            recipeID: try parseID(meal.recipeId, "days[\(d)].meals[\(m)].recipe_id"),
                            servings: meal.servings)
                    })
            })
    }
}

extension PlanContent {
    /// The note and the schedule of a draft or an update.
    init(note: String, days: [Components.Schemas.PlanDayDraft]?, weeks: [Components.Schemas.PlanWeekDraft]?) throws {
        self.init(note: note, schedule: try PlanSchedule(days: days, weeks: weeks))
        sentBoth = days != nil && weeks != nil
    }
}

extension Plan {
    var api: Components.Schemas.Plan {
        let (days, weeks) = schedule.api
        return Components.Schemas.Plan(
            id: id.text, customerId: customerID.text, kind: kind.api, authorId: authorID.text, version: version,
            sentVersion: sentVersion, sentAt: sentAt, note: note, calorieGoal: calorieGoal, days: days, weeks: weeks,
            warnings: warnings.map {
                .init(
                    day: $0.day, kcal: $0.kilocalories, goal: $0.goal,
                    code: $0.code == .belowGoal ? .belowGoal : .aboveGoal)
            },
            createdAt: createdAt, updatedAt: updatedAt, updatedBy: updatedBy.text)
    }
}

extension APIHandler {
    func filePlanRequest(_ input: Operations.FilePlanRequest.Input) async throws -> Operations.FilePlanRequest.Output {
        let body: Components.Schemas.PlanRequestDraft = try json(input.body)
        let customerID = try parseID(input.path.customerId, "customer_id")
        let request = try await change(
            FilePlanRequest(
                customerID: customerID, kind: PlanKind(body.kind), goal: body.goal,
                dailyCalorieGoal: body.dailyCalorieGoal,
                changeOf: try body.changeOf.map { try parseID($0, "change_of") }),
            on: customerID, body: body, status: 201
        ) { $0.api }
        return .created(.init(body: .json(request)))
    }

    func listPlanRequests(_ input: Operations.ListPlanRequests.Input) async throws
        -> Operations.ListPlanRequests.Output
    {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.timeAndID(input.query.cursor).map { (time: $0.createdAt, id: $0.id) }
        let rows = try await read(PlanQueue(kind: input.query.kind.map(PlanKind.init), after: after, limit: limit + 1))
        let (items, next) = keysetPage(rows, limit: limit) { Cursor.timeAndID($0.filedAt, $0.id) }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func getPlanRequest(_ input: Operations.GetPlanRequest.Input) async throws -> Operations.GetPlanRequest.Output {
        let request = try await read(GetPlanRequest(id: try parseID(input.path.requestId, "request_id")))
        return .ok(.init(body: .json(request.api)))
    }

    func takePlanRequest(_ input: Operations.TakePlanRequest.Input) async throws -> Operations.TakePlanRequest.Output {
        let id = try parseID(input.path.requestId, "request_id")
        let request = try await change(TakePlanRequest(requestID: id), on: id, body: String?.none) { $0.api }
        return .ok(.init(body: .json(request)))
    }

    func createPlan(_ input: Operations.CreatePlan.Input) async throws -> Operations.CreatePlan.Output {
        let body: Components.Schemas.PlanDraft = try json(input.body)
        let content = try PlanContent(note: body.note, days: body.days, weeks: body.weeks)
        let plan = try await change(
            CreatePlan(requestID: try parseID(body.requestId, "request_id"), content: content), body: body, status: 201
        ) { $0.api }
        return .created(.init(headers: .init(eTag: EntityTag.of(Int64(plan.version))), body: .json(plan)))
    }

    func listPlans(_ input: Operations.ListPlans.Input) async throws -> Operations.ListPlans.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.timeAndID(input.query.cursor).map { (time: $0.createdAt, id: $0.id) }
        let rows = try await read(ListPlans(after: after, limit: limit + 1))
        let (items, next) = keysetPage(rows, limit: limit) { Cursor.timeAndID($0.updatedAt, $0.id) }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func getPlan(_ input: Operations.GetPlan.Input) async throws -> Operations.GetPlan.Output {
        let plan = try await read(GetPlan(id: try parseID(input.path.planId, "plan_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(Int64(plan.version))), body: .json(plan.api)))
    }

    func updatePlan(_ input: Operations.UpdatePlan.Input) async throws -> Operations.UpdatePlan.Output {
        let body: Components.Schemas.PlanContent = try json(input.body)
        let id = try parseID(input.path.planId, "plan_id")
        let content = try PlanContent(note: body.note, days: body.days, weeks: body.weeks)
        let plan = try await change(
            UpdatePlan(id: id, content: content, ifMatch: input.headers.ifMatch), on: id, body: body
        ) { $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(Int64(plan.version))), body: .json(plan)))
    }

    func sendPlan(_ input: Operations.SendPlan.Input) async throws -> Operations.SendPlan.Output {
        let id = try parseID(input.path.planId, "plan_id")
        let plan = try await change(SendPlan(id: id, ifMatch: input.headers.ifMatch), on: id, body: String?.none) {
            $0.api
        }
        return .ok(.init(headers: .init(eTag: EntityTag.of(Int64(plan.version))), body: .json(plan)))
    }

    func listCustomerPlans(_ input: Operations.ListCustomerPlans.Input) async throws
        -> Operations.ListCustomerPlans.Output
    {
        let plans = try await read(CustomerPlans(customerID: try parseID(input.path.customerId, "customer_id")))
        let etag = EntityTag.digest("p", plans.map { "\($0.id.text):\($0.version)" })
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        let items = plans.map { plan in
            let (days, weeks) = plan.schedule.api
            return Components.Schemas.CustomerPlan(
                id: plan.id.text, kind: plan.kind.api, version: plan.version, sentAt: plan.sentAt, note: plan.note,
                days: days, weeks: weeks)
        }
        return .ok(.init(headers: .init(eTag: etag), body: .json(.init(items: items))))
    }
}
