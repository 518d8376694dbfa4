import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension Recommendation.Audience {
    var api: Components.Schemas.RecommendationAudience {
        get throws {
            let health = storedHealth
            return .init(
                subscriptions: try stored.map { try .init(known: $0) },
                ageBands: try health.bands.map { try .init(known: $0) },
                sexes: try health.sexes.map { try .init(known: $0) },
                weightGoals: try health.goals.map { try .init(known: $0) },
                activityLevels: try health.levels.map { try .init(known: $0) })
        }
    }

    init(_ api: Components.Schemas.RecommendationAudience?) {
        self.init(
            subscriptions: (api?.subscriptions ?? []).map(\.rawValue), bands: (api?.ageBands ?? []).map(\.rawValue),
            sexes: (api?.sexes ?? []).map(\.rawValue), goals: (api?.weightGoals ?? []).map(\.rawValue),
            levels: (api?.activityLevels ?? []).map(\.rawValue))
    }
}

extension Recommendation {
    var api: Components.Schemas.Recommendation {
        get throws {
            Components.Schemas.Recommendation(
                id: id.text, kind: try .init(known: kind.rawValue), title: title, body: body, html: html,
                audience: try audience.api, featured: featured, validFrom: validFrom, validUntil: validUntil,
                status: try .init(known: status.rawValue), publishedAt: publishedAt, retractedAt: retractedAt,
                retractReason: retractReason, version: version, createdAt: createdAt, updatedAt: updatedAt,
                updatedBy: updatedBy.text)
        }
    }
}

extension RecommendationDraft {
    init(_ api: Components.Schemas.RecommendationDraft) throws {
        self.init(
            kind: try Recommendation.Kind(known: api.kind.rawValue), title: api.title, body: api.body,
            audience: Recommendation.Audience(api.audience), featured: api.featured ?? [], validFrom: api.validFrom,
            validUntil: api.validUntil)
    }
}

extension APIHandler {
    func createRecommendation(_ input: Operations.CreateRecommendation.Input) async throws
        -> Operations.CreateRecommendation.Output
    {
        let body: Components.Schemas.RecommendationDraft = try json(input.body)
        let made = try await change(CreateRecommendation(try RecommendationDraft(body)), body: body, status: 201) {
            try $0.api
        }
        return .created(.init(headers: .init(eTag: EntityTag.of(made.version)), body: .json(made)))
    }

    func listRecommendations(_ input: Operations.ListRecommendations.Input) async throws
        -> Operations.ListRecommendations.Output
    {
        let status = try input.query.status.map { try Recommendation.Status(known: $0.rawValue) }
        let (items, next) = try await newestFirst(limit: input.query.limit, cursor: input.query.cursor) {
            ListRecommendations(status: status, after: $0, limit: $1)
        } answer: {
            try $0.api
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func reachRecommendationAudience(_ input: Operations.ReachRecommendationAudience.Input) async throws
        -> Operations.ReachRecommendationAudience.Output
    {
        let body: Components.Schemas.RecommendationAudience = try json(input.body)
        let reach = try await read(AudienceReach(Recommendation.Audience(body)))
        return .ok(
            .init(
                body: .json(
                    .init(
                        count: reach.count, fewerThan: reach.count == nil ? AudienceReach.minimumCount : nil,
                        sample: try reach.sample.map { try $0.api }))))
    }

    func getRecommendation(_ input: Operations.GetRecommendation.Input) async throws
        -> Operations.GetRecommendation.Output
    {
        let found = try await read(GetRecommendation(id: try parseID(input.path.recommendationId, "recommendation_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(found.version)), body: .json(try found.api)))
    }

    func updateRecommendation(_ input: Operations.UpdateRecommendation.Input) async throws
        -> Operations.UpdateRecommendation.Output
    {
        let id = try parseID(input.path.recommendationId, "recommendation_id")
        let body: Components.Schemas.RecommendationDraft = try json(input.body)
        let changed = try await change(
            UpdateRecommendation(id: id, try RecommendationDraft(body), ifMatch: input.headers.ifMatch), on: id,
            body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(changed.version)), body: .json(changed)))
    }

    func publishRecommendation(_ input: Operations.PublishRecommendation.Input) async throws
        -> Operations.PublishRecommendation.Output
    {
        let id = try parseID(input.path.recommendationId, "recommendation_id")
        let published = try await change(
            PublishRecommendation(id: id, ifMatch: input.headers.ifMatch), on: id, body: String?.none
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(published.version)), body: .json(published)))
    }

    func retractRecommendation(_ input: Operations.RetractRecommendation.Input) async throws
        -> Operations.RetractRecommendation.Output
    {
        let id = try parseID(input.path.recommendationId, "recommendation_id")
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let retracted = try await change(
            RetractRecommendation(id: id, reason: body.reason, ifMatch: input.headers.ifMatch), on: id, body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(retracted.version)), body: .json(retracted)))
    }

    /// The app's read for one customer (the reference for its hand-encoded path,
    /// `HotList.customerRecommendations`). The ETag is a digest of the recommendations answered and
    /// their versions, so an unchanged list is 304 without encoding a body.
    func listCustomerRecommendations(_ input: Operations.ListCustomerRecommendations.Input) async throws
        -> Operations.ListCustomerRecommendations.Output
    {
        let (items, etag) = try await CustomerRecommendationsRequest(customerID: input.path.customerId).run(
            database, context: try context())
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(
            .init(
                headers: .init(eTag: etag),
                body: .json(
                    .init(
                        items: try items.map {
                            .init(
                                id: $0.id.text, kind: try .init(known: $0.kind.rawValue), title: $0.title,
                                body: $0.body,
                                html: $0.html, publishedAt: $0.publishedAt, validUntil: $0.validUntil,
                                featured: try $0.featured.map {
                                    .init(kind: try .init(known: $0.kind), id: $0.id.text, title: $0.title)
                                })
                        }))))
    }
}
