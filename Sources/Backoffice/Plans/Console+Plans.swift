import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Plans made for one customer. The queue of each kind (oldest first) with "take the next", and
    /// the plans the operator may see; a request's page (its goal, the customer's profile read for
    /// the plan while the operator holds it: recorded, with the calorie goal and the Mifflin–St Jeor
    /// flags; the editor for its plan); a plan's page (each day's calories against the goal, its
    /// warnings, a new version, sending it).
    func registerPlans(on group: RouterGroup<AppRequestContext>) {
        section("plans", "Plans", needs: PlanQueue.action, on: group) { console in try await console.plansPage() }
        for kind in PlanKind.allCases {
            post("plans/next-\(kind.rawValue)", on: group) { console in
                let free = try await console.read(PlanQueue(kind: kind, limit: 100)).first {
                    [nil, console.principal.operatorID].contains($0.holder(at: console.now))
                }
                guard let free else {
                    return console.redirect("/console/plans", flash: "No \(kind.rawValue)-plan request is free.")
                }
                _ = try await console.run(TakePlanRequest(requestID: free.id))
                return console.redirect(
                    "/console/plans/requests/\(free.id.text)", flash: "You hold this request for 30 minutes.")
            }
        }
        get("plans/requests/{id}", on: group) { console in try await console.requestPage(try console.routeID()) }
        post("plans/requests/{id}/take", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                _ = try await console.run(TakePlanRequest(requestID: id))
                return console.redirect("/console/plans/requests/\(id.text)", flash: "You hold this request.")
            } refused: { issues in
                try await console.requestPage(id, issues: issues)
            }
        }
        post("plans/requests/{id}/plan", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                let plan = try await console.run(
                    CreatePlan(requestID: id, content: PlanForm(form: console.form).content))
                return console.redirect("/console/plans/\(plan.id.text)", flash: "Saved: send it when it is ready.")
            } refused: { issues in
                try await console.requestPage(id, issues: issues, values: console.form.values)
            }
        }
        get("plans/{id}", on: group) { console in try await console.planPage(try console.routeID()) }
        post("plans/{id}/edit", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                _ = try await console.run(
                    UpdatePlan(
                        id: id, content: PlanForm(form: console.form).content,
                        ifMatch: console.form["version"].map { "\"\($0)\"" }))
                return console.redirect("/console/plans/\(id.text)", flash: "Saved as a new version.")
            } refused: { issues in
                try await console.planPage(id, issues: issues, values: console.form.values)
            }
        }
        post("plans/{id}/send", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                _ = try await console.run(SendPlan(id: id, ifMatch: console.form["version"].map { "\"\($0)\"" }))
                return console.redirect("/console/plans/\(id.text)", flash: "Sent: the customer's app shows it now.")
            } refused: { issues in
                try await console.planPage(id, issues: issues)
            }
        }
    }
}

extension ConsoleRequest {
    /// The queue of each kind and the plans the operator sees (50 of each).
    fileprivate func plansPage() async throws -> ConsoleAnswer {
        let queue = try await read(PlanQueue(kind: nil, limit: Console.pageSize))
        let plans = try await read(ListPlans(limit: Console.pageSize))
        let me = principal.operatorID
        let kinds = PlanKind.allCases.map { kind -> [String: Any] in
            let waiting = queue.filter { $0.kind == kind }
            return [
                "kind": kind.rawValue, "requests": waiting.map { requestRow($0, me: me) },
                "hasRequests": !waiting.isEmpty,
                "canTake": may(TakePlanRequest.action) && waiting.contains { [nil, me].contains($0.holder(at: now)) },
            ]
        }
        return page(
            "plans", title: "Plans",
            [
                "kinds": kinds, "plans": plans.map(planRow), "hasPlans": !plans.isEmpty,
            ])
    }

    /// A refusal as the plan pages show it: the note's message by its field, the schedule's listed
    /// by where they are (`days[2].meals[0].recipe_id`), the rest for the form as a whole.
    private static func addIssues(_ issues: [FieldIssue], to data: inout [String: Any]) {
        FormRefusal(issues).add(to: &data)
        data["errorList"] = issues.filter { !$0.field.isEmpty }.map { "\($0.field): \($0.message)" }
    }

    private func requestRow(_ request: PlanRequest, me: UUID?) -> [String: Any] {
        let holder = request.holder(at: now)
        return [
            "id": request.id.text, "kind": request.kind.rawValue, "goal": String(request.goal.prefix(120)),
            "filed": ConsoleTime.text(request.filedAt), "change": request.changeOf != nil,
            "held": holder == nil ? "—" : holder == me ? "you" : "another expert",
        ]
    }

    private func planRow(_ plan: Plan) -> [String: Any] {
        [
            "id": plan.id.text, "kind": plan.kind.rawValue, "version": plan.version,
            "sent": plan.sentVersion.map { "version \($0)" } ?? "not yet", "updated": ConsoleTime.text(plan.updatedAt),
            "warnings": plan.warnings.count,
        ]
    }

    /// A request: its goal; while the operator holds it, the customer's profile read for the plan
    /// (recorded) and the editor of its plan.
    fileprivate func requestPage(_ id: UUID, issues: [FieldIssue] = [], values: [String: String]? = nil)
        async throws -> ConsoleAnswer
    {
        let request = try await read(GetPlanRequest(id: id))
        let held = request.holder(at: now) == principal.operatorID && !request.isAnswered
        let planID = request.planID ?? request.changeOf  // the plan it is answered by, or asks to change
        var data: [String: Any] = [
            "request": requestRow(request, me: principal.operatorID), "goal": request.goal,
            "calorieGoal": request.dailyCalorieGoal.map(String.init) ?? "—", "held": held,
            "answered": request.isAnswered, "canTake": !held && !request.isAnswered && may(TakePlanRequest.action),
        ]
        if let planID { data["plan"] = ["id": planID.text] }
        if held {
            var profileRead = ReadHealthProfile(customerID: request.customerID, purpose: ReadHealthProfile.planPurpose)
            profileRead.via = "console"
            if let profile = try await read(profileRead), let values = profile.values, let review = profile.review {
                data["profile"] = [
                    "goal": values.dailyCalorieGoal, "energy": review.dailyEnergy, "bmr": review.basalMetabolicRate,
                    "weightGoal": values.weightGoal.rawValue, "activity": values.activityLevel.rawValue,
                    "flags": profile.flags.map { $0.rawValue.replacingOccurrences(of: "_", with: " ") },
                    "hasFlags": !profile.flags.isEmpty,
                ]
            } else {
                data["noProfile"] = true
            }
            if planID == nil, may(CreatePlan.action) {
                let catalog = try await read(PlanCatalog())
                data["editor"] = PlanForm.rows(request.kind, values: values ?? [:], catalog: catalog)
                data["action"] = "/console/plans/requests/\(id.text)/plan"
            }
        }
        Self.addIssues(issues, to: &data)
        return page(
            "plan-request", title: "A \(request.kind.rawValue)-plan request",
            status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// A plan: its newest version day by day (or week by week), the warnings, the editor for a new
    /// version and sending it (for the holder of a request it answers).
    fileprivate func planPage(_ id: UUID, issues: [FieldIssue] = [], values: [String: String]? = nil)
        async throws -> ConsoleAnswer
    {
        let plan = try await read(GetPlan(id: id))
        var data: [String: Any] = [
            "plan": planRow(plan), "note": plan.note, "version": plan.version,
            "calorieGoal": plan.calorieGoal.map(String.init) ?? "—",
            "warnings": plan.warnings.map {
                "Day \($0.day): \($0.kilocalories) kcal, \($0.code == .belowGoal ? "under" : "over") the goal of "
                    + "\($0.goal) kcal by more than 10 %."
            },
            "hasWarnings": !plan.warnings.isEmpty, "canSend": may(SendPlan.action) && plan.sentVersion != plan.version,
        ]
        let (days, weeks) = plan.schedule.api
        data["days"] = (days ?? []).map { day in
            [
                "n": day.day, "kcal": day.kcal,
                "meals": day.meals.map {
                    "\($0.meal.capitalized): \($0.title) × \(String(format: "%g", $0.servings))"
                },
            ] as [String: Any]
        }
        data["weeks"] = (weeks ?? []).map { week in
            [
                "n": week.week, "minutes": week.minutes,
                "sessions": week.sessions.map { "Day \($0.day): \($0.title), \($0.minutes) min" },
            ] as [String: Any]
        }
        if may(UpdatePlan.action) {
            let catalog = try await read(PlanCatalog())
            data["editor"] = PlanForm.rows(plan.kind, values: values ?? PlanForm.values(of: plan), catalog: catalog)
            data["action"] = "/console/plans/\(id.text)/edit"
        }
        Self.addIssues(issues, to: &data)
        return page(
            "plan", title: "A \(plan.kind.rawValue) plan", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}
