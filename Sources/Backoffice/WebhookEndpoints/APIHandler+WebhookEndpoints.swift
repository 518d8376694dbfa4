import BackofficeAPI
import BackofficePlatform
import Foundation

extension WebhookEndpoint {
    var api: Components.Schemas.WebhookEndpoint {
        get throws {
            Components.Schemas.WebhookEndpoint(
                id: id.text, tenantId: tenantID.text, url: url, description: description,
                events: try events.map { try .init(known: $0.rawValue) }, status: try .init(known: status.rawValue),
                secretGeneration: secretGeneration, previousSecretUntil: previousSecretUntil, version: version,
                createdAt: createdAt, updatedAt: updatedAt)
        }
    }
}

extension Components.Schemas.WebhookEndpointSecret: SecretBearing {
    package func withoutSecret() -> Self { Self(endpoint: endpoint, secret: nil, secretAlreadyDelivered: true) }
}

extension APIHandler {
    func createWebhookEndpoint(_ input: Operations.CreateWebhookEndpoint.Input) async throws
        -> Operations.CreateWebhookEndpoint.Output
    {
        let body: Components.Schemas.WebhookEndpointDraft = try json(input.body)
        // The URL's host is resolved outside any transaction, and only for a caller who may register.
        try context().permit(CreateWebhookEndpoint.self)
        let target: OutboundTarget
        do {
            target = try await OutboundTarget.check(body.url, rules: outbound.rules, resolver: outbound.resolver)
        } catch let refused as OutboundTarget.Refused {
            throw DomainError.invalid([FieldIssue(field: "url", code: "refused", message: refused.description)])
        }
        let events = try body.events.map { try WebhookEvent(known: $0.rawValue) }
        let operation = CreateWebhookEndpoint(target: target, events: events, description: body.description)
        let created = try await change(operation, body: body, status: 201) { try withSecret($0) }
        return .created(.init(body: .json(created)))
    }

    func rollWebhookEndpointSecret(_ input: Operations.RollWebhookEndpointSecret.Input) async throws
        -> Operations.RollWebhookEndpointSecret.Output
    {
        let body: Components.Schemas.WebhookSecretRoll = try json(input.body)
        let id = try parseID(input.path.webhookEndpointId, "webhook_endpoint_id")
        let rolled = try await change(
            RollWebhookEndpointSecret(id: id, overlapHours: body.overlapHours), on: id, body: body
        ) { try withSecret($0) }
        return .ok(.init(body: .json(rolled)))
    }

    func listWebhookEndpoints(_ input: Operations.ListWebhookEndpoints.Input) async throws
        -> Operations.ListWebhookEndpoints.Output
    {
        let limit = try pageLimit(input.query.limit)
        let (items, next) = try await newestFirstPage(after: input.query.cursor, limit: limit) {
            try await read(ListWebhookEndpoints(after: $0, limit: $1))
        }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    /// The endpoint with its current secret: the one answer that shows it.
    private func withSecret(_ endpoint: WebhookEndpoint) throws -> Components.Schemas.WebhookEndpointSecret {
        Components.Schemas.WebhookEndpointSecret(
            endpoint: try endpoint.api,
            secret: webhookEndpointSecrets.secret(for: endpoint.id, generation: endpoint.secretGeneration))
    }
}

extension APIHandler {
    func updateWebhookEndpoint(_ input: Operations.UpdateWebhookEndpoint.Input) async throws
        -> Operations.UpdateWebhookEndpoint.Output
    {
        let body: Components.Schemas.WebhookEndpointUpdate = try json(input.body)
        let id = try parseID(input.path.webhookEndpointId, "webhook_endpoint_id")
        let update = UpdateWebhookEndpoint(
            id: id, events: try body.events?.map { try WebhookEvent(known: $0.rawValue) },
            description: body.description, status: try body.status.map { try .init(known: $0.rawValue) },
            ifMatch: input.headers.ifMatch)
        let endpoint = try await change(update, on: id, body: body) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(Int64(endpoint.version))), body: .json(endpoint)))
    }
}

extension WebhookDelivery {
    var api: Components.Schemas.WebhookDelivery {
        get throws {
            Components.Schemas.WebhookDelivery(
                id: id.text, tenantId: tenantID.text, endpointId: endpointID.text, eventId: eventID.text,
                eventType: try .init(known: eventType.rawValue), sequence: sequence,
                status: try .init(known: status.rawValue), attempts: attempts, nextAttemptAt: nextAttemptAt,
                lastAttemptAt: lastAttemptAt, lastStatus: lastStatus, lastResponse: lastResponse, lastError: lastError,
                deliveredAt: deliveredAt, replayedAt: replayedAt, createdAt: createdAt)
        }
    }
}

extension APIHandler {
    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws
        -> Operations.ListWebhookDeliveries.Output
    {
        let limit = try pageLimit(input.query.limit)
        let query = ListWebhookDeliveries(
            endpointID: try parseID(input.path.webhookEndpointId, "webhook_endpoint_id"),
            status: try input.query.status.map { try .init(known: $0.rawValue) },
            before: try Cursor.number(input.query.cursor), limit: limit + 1)
        let (items, next) = keysetPage(try await read(query), limit: limit) { [String($0.sequence)] }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getWebhookDelivery(_ input: Operations.GetWebhookDelivery.Input) async throws
        -> Operations.GetWebhookDelivery.Output
    {
        let detail = try await read(
            GetWebhookDelivery(id: try parseID(input.path.webhookDeliveryId, "webhook_delivery_id")))
        let attempts = detail.attempts.map {
            Components.Schemas.WebhookAttempt(
                number: $0.number, attemptedAt: $0.attemptedAt, durationMs: $0.durationMilliseconds, status: $0.status,
                response: $0.response, error: $0.error)
        }
        return .ok(.init(body: .json(.init(delivery: try detail.delivery.api, body: detail.body, attempts: attempts))))
    }

    func replayWebhookDelivery(_ input: Operations.ReplayWebhookDelivery.Input) async throws
        -> Operations.ReplayWebhookDelivery.Output
    {
        let id = try parseID(input.path.webhookDeliveryId, "webhook_delivery_id")
        let replayed = try await change(ReplayWebhookDelivery(id: id), on: id, body: String?.none) { try $0.api }
        return .ok(.init(body: .json(replayed)))
    }
}
