import BackofficePlatform
import Foundation
import PostgresNIO

/// A manager drafts a recommendation (`recommendations.create`). Nothing shows until it is published.
package struct CreateRecommendation: AuditedOperation {
    package static let action: Action = "recommendations.create"
    let draft: RecommendationDraft

    package init(_ draft: RecommendationDraft) { self.draft = draft }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Recommendation> {
        try draft.validate()
        try await FeaturedItem.check(draft.featured, in: unit)
        let id = unit.newID()
        let html = try await MarkdownRendering.render(draft.body).html
        let who = unit.principal.operatorID
        let health = draft.audience.storedHealth
        try await unit.execute(
            """
            INSERT INTO recommendations (id, kind, title, body, html, subscriptions, age_bands, sexes, weight_goals,
                activity_levels, featured, valid_from, valid_until, created_by, created_at, updated_by, updated_at)
            VALUES (\(id), \(draft.kind.rawValue), \(draft.title), \(draft.body), \(html), \(draft.audience.stored),
                \(health.bands), \(health.sexes), \(health.goals), \(health.levels), \(draft.featured),
                \(draft.validFrom), \(draft.validUntil), \(who), \(unit.now), \(who), \(unit.now))
            """)
        return try await Recommendation.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A manager changes a draft or a published recommendation (`recommendations.update`, `If-Match`
/// required: 428 without, 412 when stale). A published one changes in place: the app sees the
/// new words at its next read. A retracted one is 409.
package struct UpdateRecommendation: AuditedOperation {
    package static let action: Action = "recommendations.update"
    let id: UUID
    let draft: RecommendationDraft
    let ifMatch: String?

    package init(id: UUID, _ draft: RecommendationDraft, ifMatch: String?) {
        (self.id, self.draft, self.ifMatch) = (id, draft, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Recommendation> {
        guard let ifMatch else { throw DomainError.preconditionRequired }
        try draft.validate()
        let before = try await Recommendation.fetch(id, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        try before.refuseUnless([.draft, .published], "change")
        try await FeaturedItem.check(draft.featured, in: unit)
        let html = try await MarkdownRendering.render(draft.body).html
        let health = draft.audience.storedHealth
        try await unit.execute(
            """
            UPDATE recommendations SET kind = \(draft.kind.rawValue), title = \(draft.title), body = \(draft.body),
                html = \(html), subscriptions = \(draft.audience.stored), age_bands = \(health.bands),
                sexes = \(health.sexes), weight_goals = \(health.goals), activity_levels = \(health.levels),
                featured = \(draft.featured), valid_from = \(draft.validFrom),
                valid_until = \(draft.validUntil), updated_by = \(unit.principal.operatorID), updated_at = \(unit.now),
                version = version + 1
            WHERE id = \(id)
            """)
        return try await Recommendation.audited(Self.action, id, before: before, in: unit)
    }
}

/// A manager publishes a draft (`recommendations.publish`): the app shows it to its audience from
/// `valid_from` (now when absent) until `valid_until`. A window already over is 422; anything but a
/// draft is 409.
package struct PublishRecommendation: AuditedOperation {
    package static let action: Action = "recommendations.publish"
    let id: UUID
    let ifMatch: String?

    package init(id: UUID, ifMatch: String? = nil) { (self.id, self.ifMatch) = (id, ifMatch) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Recommendation> {
        let before = try await Recommendation.fetch(id, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        try before.refuseUnless([.draft], "publish")
        if let validUntil = before.validUntil, validUntil <= unit.now {
            throw DomainError.invalid("valid_until", "in_the_past", "is over: the app would never show it")
        }
        try await unit.execute(
            """
            UPDATE recommendations SET status = 'published', published_at = \(unit.now),
                updated_by = \(unit.principal.operatorID), updated_at = \(unit.now), version = version + 1
            WHERE id = \(id)
            """)
        return try await Recommendation.audited(Self.action, id, before: before, in: unit)
    }
}

/// A manager withdraws a published recommendation for good (`recommendations.retract`, reason
/// required); anything else is 409.
package struct RetractRecommendation: AuditedOperation {
    package static let action: Action = "recommendations.retract"
    let id: UUID
    let reason: String?
    let ifMatch: String?

    package init(id: UUID, reason: String?, ifMatch: String? = nil) {
        (self.id, self.reason, self.ifMatch) = (id, reason, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Recommendation> {
        let reason = try requireReason(reason)
        let before = try await Recommendation.fetch(id, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        try before.refuseUnless([.published], "retract")
        try await unit.execute(
            """
            UPDATE recommendations SET status = 'retracted', retracted_at = \(unit.now), retract_reason = \(reason),
                updated_by = \(unit.principal.operatorID), updated_at = \(unit.now), version = version + 1
            WHERE id = \(id)
            """)
        return try await Recommendation.audited(Self.action, id, before: before, reason: reason, in: unit)
    }
}

extension Recommendation {
    /// 409 `invalid_transition` unless the recommendation is in one of `statuses`.
    func refuseUnless(_ statuses: Set<Status>, _ move: String) throws {
        guard statuses.contains(status) else {
            throw DomainError.invalidTransition(
                "Cannot \(move) a recommendation that is \(status.rawValue).", current: status.rawValue)
        }
    }
}
