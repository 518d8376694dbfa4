import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Badges (managers create them; auditors read): every badge with what earns it, and a new
    /// one (slug, name, description, and optionally a metric and the threshold that awards it).
    func registerBadges(on group: RouterGroup<AppRequestContext>) {
        section("badges", "Badges", needs: CreateBadge.action, on: group) { console in
            try await console.badgesPage(issues: [])
        }
        post("badges/new", on: group) { console in
            return try await console.submit(
                reading: FormRefusal.reading(conflictFields: ["already_exists": "slug", "slug_taken": "slug"])
            ) {
                let threshold = try console.form.text("threshold").map { text -> Double in
                    guard let value = Double(text) else {
                        throw DomainError.invalid([
                            FieldIssue(field: "threshold", code: "invalid_number", message: "must be a number")
                        ])
                    }
                    return value
                }
                let badge = try await console.run(
                    CreateBadge(
                        slug: console.form["slug"] ?? "", name: console.form["name"] ?? "",
                        description: console.form.text("description"),
                        metric: console.form.text("metric"), threshold: threshold))
                return console.redirect("/console/badges", flash: "Created the \(badge.name) badge.")
            } refused: { issues in
                try await console.badgesPage(issues: issues, values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    fileprivate func badgesPage(issues: [FieldIssue], values: [String: String] = [:]) async throws -> ConsoleAnswer {
        let badges = try await read(ListBadges())
        var data: [String: Any] = [
            "badges": badges.map { badge -> [String: Any] in
                var row: [String: Any] = ["slug": badge.slug, "name": badge.name, "description": badge.description]
                if let metric = badge.metric, let threshold = badge.threshold {
                    row["earnedBy"] =
                        """
                        \(Figures.exact(threshold)) \
                        \(metric.rawValue.replacingOccurrences(of: "_", with: " ")) in one event
                        """
                }
                return row
            },
            "hasBadges": !badges.isEmpty, "values": values, "canCreate": may(CreateBadge.action),
            "metrics": ConsoleOption.all(
                Metric.allCases.map(\.rawValue), selected: values["metric"], any: "None: awarded by challenges"),
        ]
        FormRefusal(issues).add(to: &data)
        return page("badges", title: "Badges", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}
