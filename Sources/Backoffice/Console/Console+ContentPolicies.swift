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
                        ["slug": $0.slug, "title": $0.title, "version": $0.version, "published": ConsoleTime.text($0.publishedAt)]
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
            do {
                let (published, outcome) = try await console.run(
                    PublishContentPolicy(slug: slug, title: console.form["title"] ?? "", body: console.form["body"] ?? ""))
                let flash =
                    outcome == .unchanged
                    ? "Nothing to publish: the text is the current version's." : "Published version \(published.version) of \(published.title)."
                return console.redirect("/console/policies/\(published.slug)", flash: flash)
            } catch let refusal as DomainError {
                return try await console.policyPage(slug, issues: try FormRefusal.issues(refusal), values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    /// A policy's page: its current text, its versions, a diff between the two chosen (`from`,
    /// `to`; by default the previous and the current), and the form for a new version.
    fileprivate func policyPage(_ slug: String, issues: [FieldIssue], values: [String: String] = [:]) async throws -> ConsoleAnswer {
        let versions = try await read(ContentPolicyHistory(slug: slug)).sorted { $0.version < $1.version }
        guard let current = versions.last else { throw DomainError.notFound("Policy \(slug)") }
        let to = form.text("to").flatMap(Int.init).flatMap { v in versions.first { $0.version == v } } ?? current
        let from = form.text("from").flatMap(Int.init).flatMap { v in versions.first { $0.version == v } } ?? versions.dropLast().last ?? current
        var data: [String: Any] = [
            "slug": current.slug, "title": current.title, "version": current.version,
            "versions": versions.reversed().map {
                ["version": $0.version, "title": $0.title, "published": ConsoleTime.text($0.publishedAt)] as [String: Any]
            },
            "fromOptions": versions.map {
                ConsoleOption(value: String($0.version), label: "Version \($0.version)", selected: $0.version == from.version)
            },
            "toOptions": versions.map {
                ConsoleOption(value: String($0.version), label: "Version \($0.version)", selected: $0.version == to.version)
            },
            "from": from.version, "to": to.version, "diff": TextDiff.lines(from: from.body, to: to.body),
            "canPublish": may(PublishContentPolicy.action),
            "values": values.isEmpty ? ["title": current.title, "body": current.body] : values,
        ]
        FormRefusal(issues).add(to: &data)
        return page("policy", title: current.title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// A line-by-line diff of two texts (Swift's `CollectionDifference`), as the policy page shows it:
/// each line kept, removed or added, in reading order.
enum TextDiff {
    struct Line {
        let text: String
        let change: String  // "same", "removed" or "added"
        let sign: String
    }

    static func lines(from old: String, to new: String) -> [Line] {
        let before = old.components(separatedBy: "\n")
        let after = new.components(separatedBy: "\n")
        let difference = after.difference(from: before)
        var removed = Set<Int>()
        var inserted = Set<Int>()
        for change in difference {
            switch change {
            case .remove(let offset, _, _): removed.insert(offset)
            case .insert(let offset, _, _): inserted.insert(offset)
            }
        }
        var result: [Line] = []
        var (i, j) = (0, 0)
        while i < before.count || j < after.count {
            if i < before.count, removed.contains(i) {
                result.append(Line(text: before[i], change: "removed", sign: "−"))
                i += 1
            } else if j < after.count, inserted.contains(j) {
                result.append(Line(text: after[j], change: "added", sign: "+"))
                j += 1
            } else {
                if j < after.count { result.append(Line(text: after[j], change: "same", sign: " ")) }
                i += 1
                j += 1
            }
        }
        return result
    }
}
