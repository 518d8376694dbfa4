import BackofficePlatform
import Foundation
import PostgresNIO

/// Registers a webhook endpoint in the principal's shop (`webhook_endpoints.create`): its URL
/// already checked to reach only a public address (`OutboundTarget`, outside any transaction),
/// one or more event types, a description of at most 200 characters. The answer shows the
/// endpoint's first signing secret, once.
package struct CreateWebhookEndpoint: AuditedOperation {
    package static let action: Action = "webhook_endpoints.create"
    package let target: OutboundTarget
    package let events: [WebhookEvent]
    package let description: String

    package init(target: OutboundTarget, events: [WebhookEvent], description: String?) {
        self.target = target
        self.events = events
        self.description = (description ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WebhookEndpoint> {
        var validation = Validation()
        validation.text(description, "description", max: 200, required: false)
        validation.require(!events.isEmpty, "events", "required", "Name at least one event type.")
        validation.require(Set(events).count == events.count, "events", "duplicate", "Name each event type once.")
        try validation.check()
        let created = try await unit.one(
            """
            INSERT INTO webhook_endpoints (tenant_id, id, url, description, events, created_at, created_by, updated_at)
            VALUES (\(unit.principal.tenantID), \(unit.newID()), \(target.url.absoluteString), \(description),
                \(events.map(\.rawValue)), \(unit.now), \(unit.principal.operatorID), \(unit.now))
            RETURNING \(unescaped: WebhookEndpoint.columns)
            """, as: WebhookEndpoint.self, else: DomainError.inconsistent("the new webhook endpoint was not returned"))
        let event = AuditRecord(
            action: Self.action, tenantID: created.tenantID, targetType: "webhook_endpoint",
            targetID: created.id.text, reason: nil, before: nil, after: try created.snapshot)
        return Audited(created, event: event)
    }
}

/// Rolls an endpoint's signing secret (`webhook_endpoints.roll_secret`): the next generation signs
/// from now on, and the one before keeps signing beside it for `overlapHours` (0 to 72), so the
/// receiver can switch without losing a delivery. The answer shows the new secret, once.
package struct RollWebhookEndpointSecret: AuditedOperation {
    package static let action: Action = "webhook_endpoints.roll_secret"
    package let id: UUID
    package let overlapHours: Int

    package init(id: UUID, overlapHours: Int?) {
        self.id = id
        self.overlapHours = overlapHours ?? 24
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WebhookEndpoint> {
        var validation = Validation()
        validation.require((0...72).contains(overlapHours), "overlap_hours", "out_of_range", "From 0 to 72 hours.")
        try validation.check()
        let before = try await WebhookEndpoint.fetch(id, forUpdate: true, in: unit)
        let until = overlapHours == 0 ? nil : unit.now.addingTimeInterval(Double(overlapHours) * 3600)
        let after = try await unit.one(
            """
            UPDATE webhook_endpoints SET secret_generation = secret_generation + 1, previous_secret_until = \(until),
                version = version + 1, updated_at = \(unit.now)
            WHERE tenant_id = \(before.tenantID) AND id = \(id)
            RETURNING \(unescaped: WebhookEndpoint.columns)
            """, as: WebhookEndpoint.self,
            else: DomainError.inconsistent("the rolled webhook endpoint was not returned"))
        let reason =
            until.map { "the previous secret signs too until \($0.formatted(.iso8601))" }
            ?? "the previous secret stops at once"
        let event = AuditRecord(
            action: Self.action, tenantID: after.tenantID, targetType: "webhook_endpoint", targetID: id.text,
            reason: reason, before: try before.snapshot, after: try after.snapshot)
        return Audited(after, event: event)
    }
}

/// A partner admin changes an endpoint's event types, description or status
/// (`webhook_endpoints.update`): a disabled endpoint is sent nothing, and enabled again it is sent
/// what waited, in order. Its URL does not change (a new URL is a new endpoint, checked as it is
/// registered). The system makes the same change when deliveries fail for three days
/// (`WebhookEndpointFailure`). `ifMatch`, when sent, must name the current version (412).
package struct UpdateWebhookEndpoint: AuditedOperation {
    package static let action: Action = "webhook_endpoints.update"
    package let id: UUID
    package let events: [WebhookEvent]?
    package let description: String?
    package let status: WebhookEndpoint.Status?
    package let ifMatch: String?

    package init(
        id: UUID, events: [WebhookEvent]?, description: String?, status: WebhookEndpoint.Status?, ifMatch: String?
    ) {
        (self.id, self.events, self.status, self.ifMatch) = (id, events, status, ifMatch)
        self.description = description?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WebhookEndpoint> {
        let before = try await WebhookEndpoint.fetch(id, forUpdate: true, in: unit)  // another shop's is 404 first
        var validation = Validation()
        validation.require(events.map { (1...20).contains($0.count) } ?? true, "events", "count", "From 1 to 20.")
        validation.require((description?.count ?? 0) <= 200, "description", "too_long", "At most 200 characters.")
        try validation.check()
        try EntityTag.check(ifMatch, version: Int64(before.version))
        let after = try await unit.one(
            """
            UPDATE webhook_endpoints SET events = coalesce(\(events?.map(\.rawValue))::text[], events),
                description = coalesce(\(description), description), status = coalesce(\(status?.rawValue), status),
                version = version + 1, updated_at = \(unit.now)
            WHERE tenant_id = \(before.tenantID) AND id = \(id) RETURNING \(unescaped: WebhookEndpoint.columns)
            """, as: WebhookEndpoint.self, else: DomainError.inconsistent("the webhook endpoint was not returned"))
        let event = AuditRecord(
            action: Self.action, tenantID: after.tenantID, targetType: "webhook_endpoint", targetID: id.text,
            reason: nil, before: try before.snapshot, after: try after.snapshot)
        return Audited(after, event: event)
    }
}

/// A page of the shop's webhook endpoints, newest first (`webhook_endpoints.list`; a platform
/// role sees every shop's).
package typealias ListWebhookEndpoints = ListNewestFirst<WebhookEndpoint>

extension WebhookEndpoint: ListedNewestFirst, ReadByID {
    package static let table = "webhook_endpoints"
    package static let listAction: Action = "webhook_endpoints.list"
    package static let readAction: Action = "webhook_endpoints.list"
}
