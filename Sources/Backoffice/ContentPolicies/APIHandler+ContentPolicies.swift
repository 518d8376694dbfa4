import BackofficeAPI
import BackofficePlatform
import Foundation

extension ContentPolicy {
    var api: Components.Schemas.ContentPolicy {
        Components.Schemas.ContentPolicy(
            id: id.text, slug: slug, version: version, title: title, body: body, publishedAt: publishedAt)
    }
}

extension APIHandler {
    func publishContentPolicy(_ input: Operations.PublishContentPolicy.Input) async throws
        -> Operations.PublishContentPolicy.Output
    {
        let body: Components.Schemas.ContentPolicyDraft = try json(input.body)
        let stored = try await change(
            PublishContentPolicy(slug: body.slug, title: body.title, body: body.body), body: body
        ) { policy, outcome in StoredResponse(status: outcome == .published ? 201 : 200, body: policy.api) }
        return stored.status == 201 ? .created(.init(body: .json(stored.body))) : .ok(.init(body: .json(stored.body)))
    }

    func listContentPolicies(_ input: Operations.ListContentPolicies.Input) async throws
        -> Operations.ListContentPolicies.Output
    {
        .ok(.init(body: .json(.init(items: try await read(CurrentContentPolicies()).map(\.api)))))
    }

    func getContentPolicy(_ input: Operations.GetContentPolicy.Input) async throws -> Operations.GetContentPolicy.Output
    {
        .ok(.init(body: .json(try await read(GetContentPolicy(slug: input.path.policySlug)).api)))
    }

    func contentPolicyHistory(_ input: Operations.ContentPolicyHistory.Input) async throws
        -> Operations.ContentPolicyHistory.Output
    {
        .ok(
            .init(
                body: .json(.init(items: try await read(ContentPolicyHistory(slug: input.path.policySlug)).map(\.api))))
        )
    }
}
