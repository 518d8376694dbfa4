import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// FitPoints earning rules (backend managers set them; auditors read): the rules in force as
    /// a form, a dry run over the last days' activity (what the new rules would have paid beside
    /// what the rules in force paid) shown in place with the button that saves them, and saving.
    func registerEarningRules(on group: RouterGroup<AppRequestContext>) {
        section("earning-rules", "Earning rules", needs: CurrentEarningRules.action, on: group) { console in
            let current = try? await console.read(CurrentEarningRules())
            return try await console.earningRulesPage(
                values: EarningRulesForm.values(of: current?.rules), issues: [], current: current)
        }
        post("earning-rules/preview", on: group) { console in
            let current = try? await console.read(CurrentEarningRules())
            let form = EarningRulesForm(console.form)
            return try await console.submit {
                let days = try form.days()
                let outcome = try await console.read(SimulateEarningRules(try form.draft(), days: days))
                return try await console.earningRulesPage(
                    values: console.form.values, issues: [], current: current, preview: outcome)
            } refused: { issues in
                try await console.earningRulesPage(
                    values: console.form.values, issues: form.issues(issues), current: current)
            }
        }
        post("earning-rules", on: group) { console in
            let form = EarningRulesForm(console.form)
            return try await console.submit {
                let change = SetEarningRules(try form.draft(), reason: console.form.text("reason"))
                guard case .done(let (set, outcome)) = try await console.runUnlessHeld(change) else {
                    return console.redirect(
                        "/console/earning-rules",
                        flash: "Held for a second person's approval: the rules in force stay until another approver "
                            + "accepts the change.")
                }
                let flash =
                    outcome == .unchanged
                    ? "Nothing changed: these are the rules in force." : "Version \(set.version) is in force."
                return console.redirect("/console/earning-rules", flash: flash)
            } refused: { issues in
                let current = try? await console.read(CurrentEarningRules())
                return try await console.earningRulesPage(
                    values: console.form.values, issues: form.issues(issues), current: current)
            }
        }
    }
}

extension ConsoleRequest {
    fileprivate func earningRulesPage(
        values: [String: String], issues: [FieldIssue], current: EarningRuleSet?,
        preview: SimulateEarningRules.Outcome? = nil
    ) async throws -> ConsoleAnswer {
        let refusal = FormRefusal(issues)
        var data: [String: Any] = [
            "values": values, "canSet": may(SetEarningRules.action), "canSimulate": may(SimulateEarningRules.action),
            "metrics": Metric.allCases.map { metric -> [String: Any] in
                var row: [String: Any] = [
                    "metric": metric.rawValue, "label": metric.rawValue.replacingOccurrences(of: "_", with: " "),
                    "rate": values["\(metric.rawValue)_rate"] ?? "", "cap": values["\(metric.rawValue)_cap"] ?? "",
                    "intensities": metric == .workoutMinutes
                        ? ConsoleOption.all(
                            MET.Intensity.allCases.map(\.rawValue), selected: values["\(metric.rawValue)_intensity"],
                            any: "Any")
                        : [],
                    "hasIntensity": metric == .workoutMinutes,
                ]
                for part in ["rate", "cap", "intensity"] {
                    if let message = refusal.byField["\(metric.rawValue)_\(part)"] { row["\(part)Error"] = message }
                }
                return row
            },
            "dayOptions": [7, 30, 90].map {
                ConsoleOption.choice(
                    value: String($0), label: "\($0) days", selected: String($0) == (values["days"] ?? "30"))
            },
        ]
        if let current { data["version"] = current.version }
        let pending = try await pendingApprovals(on: "fitpoints_rules", "next")
        (data["pending"], data["hasPending"]) = (pending, !pending.isEmpty)
        if let preview {
            data["preview"] =
                [
                    "lines": preview.lines.map { line -> [String: Any] in
                        [
                            "rule": line.ruleID, "events": line.events, "customers": line.customers,
                            "points": Money.fitPoints(line.points),
                            "current": Money.fitPoints(line.currentPoints),
                        ]
                    },
                    "points": Money.fitPoints(preview.points), "current": Money.fitPoints(preview.currentPoints),
                    "since": ConsoleTime.text(preview.since), "until": ConsoleTime.text(preview.until),
                    "hidden": values.filter { !["days", "reason"].contains($0.key) }.sorted { $0.key < $1.key }.map {
                        ["name": $0.key, "value": $0.value]
                    },
                ] as [String: Any]
        }
        refusal.add(to: &data)
        return page("earning-rules", title: "Earning rules", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// The earning rules form: per metric its points per unit (empty: no rule), daily cap and, for
/// workouts, the least intensity; badge and event awards one per line (`first-5k 100`).
struct EarningRulesForm {
    let form: ConsoleForm
    /// The metrics with a rule, in the order the draft lists them (to name a refused field).
    private var drafted: [Metric] { Metric.allCases.filter { form.text("\($0.rawValue)_rate") != nil } }

    init(_ form: ConsoleForm) { self.form = form }

    func days() throws -> Int {
        guard let days = Int(form["days"] ?? "30") else {
            throw DomainError.invalid([
                FieldIssue(field: "days", code: "invalid_number", message: "must be a number of days")
            ])
        }
        return days
    }

    func draft() throws -> EarningRules.Draft {
        var issues: [FieldIssue] = []
        func number(_ field: String) -> Double? {
            guard let text = form.text(field) else { return nil }
            guard let value = Double(text) else {
                issues.append(FieldIssue(field: field, code: "invalid_number", message: "must be a number"))
                return nil
            }
            return value
        }
        var metrics: [EarningRules.Draft.Metric] = []
        for metric in drafted {
            let rate = number("\(metric.rawValue)_rate") ?? 0
            let cap = number("\(metric.rawValue)_cap") ?? 0
            metrics.append(
                .init(
                    metric: metric.rawValue, pointsPerUnit: rate, dailyCap: cap,
                    minIntensity: form.text("\(metric.rawValue)_intensity")))
        }
        func awards(_ field: String) -> [EarningRules.Draft.Award] {
            (form["\(field)"] ?? "").split(whereSeparator: \.isNewline).compactMap { line in
                let parts = line.split(whereSeparator: \.isWhitespace)
                guard !parts.isEmpty else { return nil }
                guard parts.count == 2, let points = Double(parts[1]) else {
                    issues.append(
                        FieldIssue(
                            field: field, code: "invalid_award",
                            message: "'\(line)' is not a name and points, such as first-5k 100"))
                    return nil
                }
                return .init(name: String(parts[0]), points: points)
            }
        }
        let (badges, events) = (awards("badges"), awards("events"))
        guard issues.isEmpty else { throw DomainError.invalid(issues) }
        return EarningRules.Draft(metrics: metrics, badges: badges, events: events)
    }

    /// The use case's field names (`metrics[1].daily_cap`) as the form's (`workout_minutes_cap`).
    func issues(_ issues: [FieldIssue]) -> [FieldIssue] {
        let metrics = drafted
        return issues.map { issue in
            var field = issue.field
            if let match = field.wholeMatch(of: /metrics\[(\d+)\]\.(\w+)/), let index = Int(match.1),
                index < metrics.count
            {
                let suffix =
                    ["points_per_unit": "rate", "daily_cap": "cap", "min_intensity": "intensity"][String(match.2)]
                    ?? "rate"
                field = "\(metrics[index].rawValue)_\(suffix)"
            } else if field.hasPrefix("badges") {
                field = "badges"
            } else if field.hasPrefix("events") {
                field = "events"
            }
            return FieldIssue(field: field, code: issue.code, message: issue.message)
        }
    }

    /// The rules in force as the form's values.
    static func values(of rules: EarningRules?) -> [String: String] {
        var values: [String: String] = ["days": "30"]
        for rule in rules?.metrics ?? [] {
            values["\(rule.metric.rawValue)_rate"] = Figures.exact(rule.pointsPerUnit, grouped: false)
            values["\(rule.metric.rawValue)_cap"] = String(rule.dailyCap)
            if let intensity = rule.minIntensity { values["\(rule.metric.rawValue)_intensity"] = intensity.rawValue }
        }
        values["badges"] = (rules?.badges ?? []).map { "\($0.badge) \($0.points)" }.joined(separator: "\n")
        values["events"] = (rules?.events ?? []).map { "\($0.event.rawValue) \($0.points)" }.joined(separator: "\n")
        return values
    }
}
