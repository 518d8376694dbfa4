import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// A customer's health profile (managers; auditors see ranges): the page asks why once per
    /// session and customer (`policies/privacy.yaml`'s purposes), then every opening reads the
    /// profile for that purpose, which records one access event; the weight chart with its table;
    /// and who read this customer's data.
    func registerHealthProfiles(on group: RouterGroup<AppRequestContext>) {
        get("accounts/{id}/health", on: group) { console in try await console.healthPage(try console.routeID()) }
        post("accounts/{id}/health/purpose", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                _ = try await console.run(StateReadPurpose(customerID: id, purpose: console.form.text("purpose")))
                return console.redirect("/console/accounts/\(id.text)/health", flash: nil)
            } refused: { issues in
                try await console.purposePage(id, issues: issues)
            }
        }
    }
}

extension ConsoleRequest {
    /// The profile read for the session's stated purpose, or the question when none is stated.
    fileprivate func healthPage(_ id: UUID) async throws -> ConsoleAnswer {
        guard let purpose = try await read(StatedReadPurpose(customerID: id)) else {
            return try await purposePage(id, issues: [])
        }
        let customer = try await read(GetCustomerAccount(id: id))
        var data: [String: Any] = [
            "customer": id.text, "email": customer.email, "purposes": purposeOptions(selected: purpose),
            "purposeLabel": label(purpose),
        ]
        var read = ReadHealthProfile(customerID: id, purpose: purpose)
        read.via = "console"
        if let profile = try await self.read(read) {
            data["profile"] = HealthProfileView(profile, at: now)
        } else {
            data["noProfile"] = true
        }
        try await addAccesses(id, to: &data)
        return page("health-profile", title: "Health profile of \(customer.email)", data)
    }

    /// Why do you read this customer's data? (Asked before anything is read.)
    fileprivate func purposePage(_ id: UUID, issues: [FieldIssue]) async throws -> ConsoleAnswer {
        let customer = try await read(GetCustomerAccount(id: id))
        var data: [String: Any] = [
            "customer": id.text, "email": customer.email, "purposes": purposeOptions(selected: form.text("purpose")),
        ]
        FormRefusal(issues).add(to: &data)
        try await addAccesses(id, to: &data)
        return page(
            "health-purpose", title: "Why do you read this customer's data?",
            status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// "Who read this customer's data": the 50 newest access events, when the role may list them.
    private func addAccesses(_ id: UUID, to data: inout [String: Any]) async throws {
        guard may(ListHealthProfileAccesses.action) else { return }
        let accesses = try await read(ListHealthProfileAccesses(customerID: id, limit: Console.pageSize))
        data["accesses"] = accesses.map { access in
            [
                "at": ConsoleTime.text(access.occurredAt), "role": access.actorRole, "purpose": label(access.purpose),
                "via": access.via, "actor": access.actorEmail ?? access.actorID?.text ?? "—",
            ]
        }
        data["hasAccesses"] = !accesses.isEmpty
    }

    private func purposeOptions(selected: String?) -> [[String: Any]] {
        context.policies.privacy.readPurposes.map {
            ["value": $0.code, "label": $0.label, "selected": $0.code == selected]
        }
    }

    private func label(_ code: String) -> String {
        context.policies.privacy.readPurposes.first { $0.code == code }?.label ?? code
    }
}

/// A profile as its page shows it: the values (or their ranges), the flags in words, the chart.
struct HealthProfileView {
    let rows: [[String: String]]
    let flags: [String]
    let hasFlags: Bool
    let chartHTML: HTML
    let chartSummary: String
    let weights: [[String: String]]
    let masked: Bool
    let synced: ShownTime
    let version: Int

    init(_ read: HealthProfileRead, at now: Date) {
        masked = read.values == nil
        synced = ConsoleTime.text(read.syncedAt)
        version = read.version
        var rows: [[String: String]] = []
        if let v = read.values {
            rows = [
                ["name": "Height", "value": "\(v.heightCM) cm"],
                ["name": "Weight", "value": "\(WeightChart.kg(Double(v.weightHG) / 10)) kg"],
                ["name": "Age", "value": "\(v.age(at: now)) (born \(v.birthYear))"],
                ["name": "Sex", "value": v.sex.rawValue.replacingOccurrences(of: "_", with: " ")],
            ]
            if let target = v.targetWeightHG {
                let by = v.targetDate.map { " by \(HealthEntry.dayText($0))" } ?? ""
                rows.append(["name": "Target", "value": "\(WeightChart.kg(Double(target) / 10)) kg\(by)"])
            }
            rows.append(["name": "Daily calorie goal", "value": "\(v.dailyCalorieGoal) kcal"])
        } else if let r = read.ranges {
            rows = [
                ["name": "Height", "value": "\(r.heightCM) cm"], ["name": "Weight", "value": "\(r.weightKG) kg"],
                ["name": "Age", "value": r.age], ["name": "Daily calorie goal", "value": "\(r.dailyCalorieGoal) kcal"],
            ]
        }
        rows.append(["name": "Goal", "value": read.weightGoal.rawValue])
        rows.append(["name": "Activity", "value": read.activityLevel.rawValue.replacingOccurrences(of: "_", with: " ")])
        if let review = read.review {
            rows.append([
                "name": "Estimate (Mifflin–St Jeor)",
                "value": "\(review.basalMetabolicRate) kcal at rest, \(review.dailyEnergy) kcal a day",
            ])
        }
        self.rows = rows
        flags = read.flags.map(Self.words)
        hasFlags = !flags.isEmpty
        let chart = WeightChart(points: read.weights)
        chartHTML = chart.svg
        chartSummary = chart.summary
        weights = chart.rows
    }

    static func words(_ flag: CalorieReview.Flag) -> String {
        switch flag {
        case .lowCalorieGoal: "The daily calorie goal is under the floor (1,200 kcal; 1,500 for men)."
        case .fastPlannedLoss: "The plan loses more than 1 kg a week."
        }
    }
}
