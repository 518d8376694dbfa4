import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Recommendations (backend managers write; auditors read): the list by status, compose and
    /// edit with the server's preview and the audience's dry run in place (how many active
    /// customers the rule reaches now, and ten of them, masked as the role requires), a
    /// recommendation's page with its reach, publish and retract (reason, confirmed).
    func registerRecommendations(on group: RouterGroup<AppRequestContext>) {
        section("recommendations", "Recommendations", needs: ListRecommendations.action, on: group) { console in
            try await console.recommendationList()
        }
        get("recommendations/new", on: group) { console in
            guard console.may(CreateRecommendation.action) else {
                throw DomainError.forbidden(CreateRecommendation.action)
            }
            return try await console.recommendationForm(values: ["kind": "exercise"], issues: [])
        }
        post("recommendations/new", on: group) { console in
            guard console.form["intent"] == "save" else { return try await console.recommendationForm() }
            return try await console.submit(reading: RecommendationForm.issues) {
                let made = try await console.run(CreateRecommendation(try RecommendationForm(console.form).draft()))
                return console.redirect(
                    "/console/recommendations/\(made.id.text)", flash: "Saved as a draft: publish it when it is ready.")
            } refused: { issues in
                try await console.recommendationForm(issues: issues)
            }
        }
        get("recommendations/{id}", on: group) { console in
            try await console.recommendationPage(try console.routeID(), issues: [])
        }
        get("recommendations/{id}/edit", on: group) { console in
            let found = try await console.read(GetRecommendation(id: try console.routeID()))
            return try await console.recommendationForm(
                values: RecommendationForm.values(of: found), recommendation: found)
        }
        post("recommendations/{id}/edit", on: group) { console in
            let found = try await console.read(GetRecommendation(id: try console.routeID()))
            guard console.form["intent"] == "save" else {
                return try await console.recommendationForm(recommendation: found)
            }
            return try await console.submit(reading: RecommendationForm.issues) {
                _ = try await console.run(
                    UpdateRecommendation(
                        id: found.id, try RecommendationForm(console.form).draft(), ifMatch: console.form["version"]))
                return console.redirect("/console/recommendations/\(found.id.text)", flash: "Saved.")
            } refused: { issues in
                try await console.recommendationForm(issues: issues, recommendation: found)
            }
        }
        post("recommendations/{id}/publish", on: group) { console in
            try await console.moveRecommendation(retract: false)
        }
        post("recommendations/{id}/retract", on: group) { console in try await console.moveRecommendation(retract: true)
        }
    }
}

extension ConsoleRequest {
    /// The list, most recently changed first, by status.
    fileprivate func recommendationList() async throws -> ConsoleAnswer {
        let status = try form.text("status").map { try Recommendation.Status(known: $0) }
        let (items, next) = try await newestFirstPage(after: form.text("cursor"), limit: Console.pageSize) {
            try await read(ListRecommendations(status: status, after: $0, limit: $1))
        }
        var data: [String: Any] = [
            "recommendations": items.map { RecommendationView($0, now: now) },
            "hasRecommendations": !items.isEmpty, "canCreate": may(CreateRecommendation.action),
            "statuses": ConsoleOption.all(
                Recommendation.Status.allCases.map(\.rawValue), selected: status?.rawValue, any: "Any status"),
        ]
        if let next {
            data["next"] = ConsoleLinks.path(
                "/console/recommendations", ["status": status?.rawValue ?? "", "cursor": next])
        }
        return page("recommendations", title: "Recommendations", data)
    }

    /// The compose or edit form: the values (as sent when nil), the preview of the body and the
    /// audience's reach counted now, each issue next to its field (422).
    fileprivate func recommendationForm(
        values: [String: String]? = nil, issues: [FieldIssue] = [], recommendation: Recommendation? = nil
    ) async throws -> ConsoleAnswer {
        let values = values ?? form.values
        let audience = RecommendationForm.audience(values)
        var data: [String: Any] = [
            "values": values,
            "kinds": ConsoleOption.all(Recommendation.Kind.allCases.map(\.rawValue), selected: values["kind"]),
            "subscriptions": Subscription.allCases.map {
                ["value": $0.rawValue, "checked": audience.subscriptions.contains($0)] as [String: Any]
            },
            "healthParts": RecommendationForm.healthParts(audience),
            "featuredParts": RecommendationForm.featuredParts(
                try await read(FeaturableContent()), ticked: RecommendationForm.featured(values)),
            "action": recommendation.map { "/console/recommendations/\($0.id.text)/edit" }
                ?? "/console/recommendations/new",
            "isNew": recommendation == nil,
        ]
        if let recommendation {
            data["recommendation"] = ["id": recommendation.id.text, "title": recommendation.title]
            data["version"] = values["version"] ?? EntityTag.of(recommendation.version)
        }
        data.merge(try await MarkdownRendering.preview(values["body"] ?? "")) { $1 }
        data.merge(try await reach(audience)) { $1 }
        FormRefusal(issues).add(to: &data)
        let title = recommendation.map { "Edit: \($0.title)" } ?? "New recommendation"
        return page("recommendation-form", title: title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// A recommendation's page: what the app shows, to whom and when, its reach now, and the moves
    /// its status and the role allow.
    fileprivate func recommendationPage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let found = try await read(GetRecommendation(id: id))
        var view = RecommendationView(found, now: now)
        let featured = try await read(FeaturedTitles(items: found.featured))
        view.featured = featured.isEmpty ? nil : featured.joined(separator: "; ")
        var data: [String: Any] = [
            "recommendation": view,
            "bodyHTML": HTML(StoredHTML(html: found.html)), "version": EntityTag.of(found.version),
            "values": values,
            "canEdit": found.status != .retracted && may(UpdateRecommendation.action),
            "canPublish": found.status == .draft && may(PublishRecommendation.action),
            "canRetract": found.status == .published && may(RetractRecommendation.action),
        ]
        if found.status != .retracted { data.merge(try await reach(found.audience)) { $1 } }
        FormRefusal(issues).add(to: &data)
        return page(
            "recommendation", title: found.title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// Publishes or retracts (a reason, and the box ticked) with the form's version; a refusal is
    /// shown on the recommendation's page.
    fileprivate func moveRecommendation(retract: Bool) async throws -> ConsoleAnswer {
        let id = try routeID()
        return try await submit {
            if retract {
                try form.confirm("retract")
                _ = try await run(RetractRecommendation(id: id, reason: form.text("reason"), ifMatch: form["version"]))
            } else {
                _ = try await run(PublishRecommendation(id: id, ifMatch: form["version"]))
            }
            let done =
                retract ? "Retracted: the app no longer shows it." : "Published: the app shows it to its audience."
            return redirect("/console/recommendations/\(id.text)", flash: done)
        } refused: { issues in
            try await recommendationPage(id, issues: issues, values: form.values)
        }
    }

    /// The audience's dry run as a page shows it (when the role may run it).
    private func reach(_ audience: Recommendation.Audience) async throws -> [String: Any] {
        guard may(AudienceReach.action) else { return [:] }
        let reach = try await read(AudienceReach(audience))
        return [
            "showsReach": true,
            "reachKnown": reach.count != nil, "reachCount": reach.count ?? 0,
            "reachUnder": AudienceReach.minimumCount,
            "reachSample": reach.sample.map { ["id": $0.id.text, "name": $0.displayName, "email": $0.email] },
            "hasSample": !reach.sample.isEmpty,
        ]
    }
}

/// A recommendation as the list and its page show it.
struct RecommendationView {
    let id: String, kind: String, title: String, status: String, audience: String, validFrom: ShownTime?
    let validUntil: ShownTime?, updated: ShownTime, retractReason: String?, showing: Bool
    /// What it features, as its page names each piece ("video: Morning flow (not live)").
    var featured: String?

    init(_ recommendation: Recommendation, now: Date) {
        id = recommendation.id.text
        kind = recommendation.kind.rawValue
        title = recommendation.title
        status = recommendation.status.rawValue
        let states = recommendation.audience.stored
        let health = zip(Recommendation.Audience.healthParts, recommendation.audience.health).map {
            ($0.0.label.lowercased(), $0.1)
        }
        let parts = ([("subscription", states)] + health).filter { !$0.1.isEmpty }.map {
            "\($0.0) " + $0.1.joined(separator: " or ").replacingOccurrences(of: "_", with: " ")
        }
        audience = parts.isEmpty ? "every customer" : parts.joined(separator: "; ")
        validFrom = recommendation.validFrom.map(ConsoleTime.text)
        validUntil = recommendation.validUntil.map(ConsoleTime.text)
        updated = ConsoleTime.text(recommendation.updatedAt)
        retractReason = recommendation.retractReason
        showing = recommendation.shows(at: now)
    }
}

/// The compose form's fields, read into a draft: times in UTC (`datetime-local`), one checkbox per
/// subscription state (none ticked: any).
struct RecommendationForm {
    let form: ConsoleForm

    init(_ form: ConsoleForm) { self.form = form }

    func draft() throws -> RecommendationDraft {
        var issues: [FieldIssue] = []
        func time(_ field: String) -> Date? { form.time(field, issues: &issues) }
        let kind = Recommendation.Kind(rawValue: form["kind"] ?? "")
        if kind == nil { issues.append(FieldIssue(field: "kind", code: "unknown", message: "choose a kind")) }
        let (from, until) = (time("valid_from"), time("valid_until"))
        guard issues.isEmpty, let kind else { throw DomainError.invalid(issues) }
        return RecommendationDraft(
            kind: kind, title: form["title"] ?? "", body: form["body"] ?? "",
            audience: Self.audience(form.values), featured: Self.featured(form.values), validFrom: from,
            validUntil: until)
    }

    /// The content the form's checkboxes (`featured_<kind>_<id>`) feature, `kind:id`: the pieces the
    /// recommendation featured before (`featured_was`) in their order, so an edit keeps the order an
    /// API client chose; then the newly ticked ones, videos, then recipes, then articles.
    static func featured(_ values: [String: String]) -> [String] {
        let ticked = values.filter { $0.key.hasPrefix("featured_") && $0.value == "yes" }.keys
            .compactMap {
                FeaturedItem(text: String($0.dropFirst("featured_".count)).replacingOccurrences(of: "_", with: ":"))
            }
            .sorted { ($0.kind.order, $0.id.uuidString) < ($1.kind.order, $1.id.uuidString) }.map(\.text)
        let before = (values["featured_was"] ?? "").split(separator: " ").map(String.init).filter(ticked.contains)
        return before + ticked.filter { !before.contains($0) }
    }

    /// The featurable content as the form's fieldsets show it: a legend and a checkbox per live piece.
    static func featuredParts(_ content: [FeaturedItem.Kind: [(id: UUID, title: String)]], ticked: [String])
        -> [[String: Any]]
    {
        FeaturedItem.Kind.allCases.compactMap { kind in
            guard let pieces = content[kind], !pieces.isEmpty else { return nil }
            return [
                "legend": "Feature \(kind.rawValue)s",
                "choices": pieces.map { piece in
                    let item = FeaturedItem(kind: kind, id: piece.id)
                    return [
                        "id": "featured_\(kind.rawValue)_\(piece.id.text)", "label": piece.title,
                        "checked": ticked.contains(item.text),
                    ] as [String: Any]
                },
            ]
        }
    }

    /// A refusal as the form shows it: the featured pieces' issues (`featured[2]`) above their fieldsets.
    static func issues(_ refusal: DomainError) throws -> [FieldIssue] {
        try FormRefusal.issues(refusal).map {
            $0.field.hasPrefix("featured") ? FieldIssue(field: "featured", code: $0.code, message: $0.message) : $0
        }
    }

    /// The audience the form's checkboxes (`subscription_<state>`, `<part>_<value>` for the health
    /// parts) select.
    static func audience(_ values: [String: String]) -> Recommendation.Audience {
        func ticked(_ part: String, _ all: [String]) -> [String] { all.filter { values["\(part)_\($0)"] == "yes" } }
        return Recommendation.Audience(
            subscriptions: ticked("subscription", Subscription.allCases.map(\.rawValue)),
            health: Recommendation.Audience.healthParts.map { ticked($0.key, $0.all) })
    }

    /// The health parts as the form's fieldsets show them: a legend and a checkbox per value.
    static func healthParts(_ audience: Recommendation.Audience) -> [[String: Any]] {
        zip(Recommendation.Audience.healthParts, audience.health).map { part, chosen in
            [
                "legend": part.label,
                "choices": part.all.map {
                    [
                        "id": "\(part.key)_\($0)", "label": $0.replacingOccurrences(of: "_", with: " "),
                        "checked": chosen.contains($0),
                    ] as [String: Any]
                },
            ]
        }
    }

    /// A stored recommendation as the form's values (times as `datetime-local` in UTC).
    static func values(of recommendation: Recommendation) -> [String: String] {
        func field(_ date: Date?) -> String { date.map(ConsoleTime.field) ?? "" }
        var values = [
            "kind": recommendation.kind.rawValue, "title": recommendation.title, "body": recommendation.body,
            "valid_from": field(recommendation.validFrom), "valid_until": field(recommendation.validUntil),
        ]
        for state in recommendation.audience.subscriptions { values["subscription_\(state.rawValue)"] = "yes" }
        for (part, chosen) in zip(Recommendation.Audience.healthParts, recommendation.audience.health) {
            for value in chosen { values["\(part.key)_\(value)"] = "yes" }
        }
        for text in recommendation.featured {
            values["featured_" + text.replacingOccurrences(of: ":", with: "_")] = "yes"
        }
        values["featured_was"] = recommendation.featured.joined(separator: " ")
        return values
    }
}
