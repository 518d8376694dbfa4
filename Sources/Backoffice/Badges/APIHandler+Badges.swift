import BackofficeAPI
import BackofficePlatform
import Foundation

extension Badge {
    var api: Components.Schemas.Badge {
        Components.Schemas.Badge(
            slug: slug, name: name, description: description, metric: metric?.rawValue, threshold: threshold,
            createdAt: createdAt)
    }
}

extension APIHandler {
    func createBadge(_ input: Operations.CreateBadge.Input) async throws -> Operations.CreateBadge.Output {
        let body: Components.Schemas.BadgeDraft = try json(input.body)
        let badge = try await change(
            CreateBadge(
                slug: body.slug, name: body.name, description: body.description, metric: body.metric,
                threshold: body.threshold),
            body: body, status: 201
        ) { $0.api }
        return .created(.init(body: .json(badge)))
    }

    func listBadges(_ input: Operations.ListBadges.Input) async throws -> Operations.ListBadges.Output {
        .ok(.init(body: .json(.init(items: try await read(ListBadges()).map(\.api)))))
    }

    func customerBadges(_ input: Operations.CustomerBadges.Input) async throws -> Operations.CustomerBadges.Output {
        let awards = try await read(CustomerBadges(customerID: try parseID(input.path.customerId, "customer_id")))
        return .ok(
            .init(
                body: .json(
                    .init(items: awards.map { .init(badge: $0.badge.api, source: $0.source, awardedAt: $0.awardedAt) }))
            ))
    }
}
