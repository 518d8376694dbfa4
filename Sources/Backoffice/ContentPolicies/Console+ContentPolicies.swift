import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Content policies (backend managers publish; others read): the current version of each,
    /// a policy's versions with a line-by-line diff between any two, and a new version.
    func registerContentPolicies(on group: RouterGroup<AppRequestContext>) {
        section("policies", "Policies", needs: CurrentContentPolicies.action, on: group) { console in
            let policies = try await console.read(CurrentContentPolicies())
            return console.page(
                "policies", title: "Content policies",
                [
                    "policies": policies.map {
                        [
                            "slug": $0.slug, "title": $0.title, "version": $0.version,
                            "published": ConsoleTime.text($0.publishedAt),
                        ]
                            as [String: Any]
                    },
                    "hasPolicies": !policies.isEmpty,
                ])
        }
        get("policies/{slug}", on: group) { console in
            try await console.policyPage(console.parameters.get("slug") ?? "", issues: [])
        }
        post("policies/{slug}", on: group) { console in
            let slug = console.parameters.get("slug") ?? ""
            return try await console.submit {
                let (published, outcome) = try await console.run(
                    PublishContentPolicy(
                        slug: slug, title: console.form["title"] ?? "", body: console.form["body"] ?? ""))
                let flash =
                    outcome == .unchanged
                    ? "Nothing to publish: the text is the current version's."
                    : "Published version \(published.version) of \(published.title)."
                return console.redirect("/console/policies/\(published.slug)", flash: flash)
            } refused: { issues in
                try await console.policyPage(slug, issues: issues, values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    /// A policy's page: its current text, its versions, a diff between the two chosen (`from`,
    /// `to`; by default the previous and the current), and the form for a new version.
    fileprivate func policyPage(_ slug: String, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let versions = try await read(ContentPolicyHistory(slug: slug)).sorted { $0.version < $1.version }
        guard let current = versions.last else { throw DomainError.notFound("Policy \(slug)") }
        let to = form.text("to").flatMap(Int.init).flatMap { v in versions.first { $0.version == v } } ?? current
        let from =
            form.text("from").flatMap(Int.init).flatMap { v in versions.first { $0.version == v } }
            ?? versions.dropLast().last ?? current
        var data: [String: Any] = [
            "slug": current.slug, "title": current.title, "version": current.version,
            "versions": versions.reversed().map {
                ["version": $0.version, "title": $0.title, "published": ConsoleTime.text($0.publishedAt)]
                    as [String: Any]
            },
            "fromOptions": versions.map {
                ConsoleOption.choice(
                    value: String($0.version), label: "Version \($0.version)", selected: $0.version == from.version)
            },
            "toOptions": versions.map {
                ConsoleOption.choice(
                    value: String($0.version), label: "Version \($0.version)", selected: $0.version == to.version)
            },
            "from": from.version, "to": to.version, "diff": TextDiff(from: from.body, to: to.body).values,
            "canPublish": may(PublishContentPolicy.action),
            "values": values.isEmpty ? ["title": current.title, "body": current.body] : values,
        ]
        FormRefusal(issues).add(to: &data)
        return page("policy", title: current.title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}
