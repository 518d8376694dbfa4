import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Webhook endpoints: the shop's endpoints, newest first, and the form for a new one. A new
    /// endpoint's signing secret is shown on the answer to its form, once (never in a flash, which
    /// a session keeps).
    func registerWebhookEndpoints(
        on group: RouterGroup<AppRequestContext>, outbound: OutboundSettings, secrets: WebhookEndpointSecrets
    ) {
        section("webhook-endpoints", "Webhook endpoints", needs: ListWebhookEndpoints.action, on: group) { console in
            try await console.webhookEndpointsPage(issues: [])
        }
        // No transaction is held while the URL's host is resolved.
        post("webhook-endpoints", on: group, holdsTransaction: false) { console in
            try await console.submit {
                let created = try await console.run(try await console.webhookEndpointForm(outbound))
                let secret = secrets.secret(for: created.id, generation: created.secretGeneration)
                return try await console.webhookEndpointsPage(issues: [], shown: (created, secret))
            } refused: { issues in
                try await console.webhookEndpointsPage(issues: issues, values: console.form.values)
            }
        }
        registerWebhookDeliveries(on: group)
    }
}

extension ConsoleRequest {
    /// The form's endpoint: its URL checked (outside any transaction, after the permission), the
    /// event types ticked (`event_<type>`), the description.
    fileprivate func webhookEndpointForm(_ outbound: OutboundSettings) async throws -> CreateWebhookEndpoint {
        try context.permit(CreateWebhookEndpoint.self)
        let events = WebhookEvent.allCases.filter { form["event_\($0.rawValue)"] == "yes" }
        do {
            let target = try await OutboundTarget.check(
                form.text("url") ?? "", rules: outbound.rules, resolver: outbound.resolver)
            return CreateWebhookEndpoint(target: target, events: events, description: form.text("description"))
        } catch let refused as OutboundTarget.Refused {
            throw DomainError.invalid([FieldIssue(field: "url", code: "refused", message: refused.description)])
        }
    }

    /// The webhook endpoints page: a page of them, newest first, and (for who may) the form, with its
    /// refused values and issues; after a registration, the new endpoint's secret.
    fileprivate func webhookEndpointsPage(
        issues: [FieldIssue], values: [String: String] = [:], shown: (WebhookEndpoint, String)? = nil
    ) async throws -> ConsoleAnswer {
        let (rows, cursor) = try await newestFirstPage(after: form.text("cursor"), limit: Console.pageSize) {
            try await read(ListWebhookEndpoints(after: $0, limit: $1))
        }
        var data: [String: Any] = [
            "rows": rows.map {
                [
                    "id": $0.id.text, "url": $0.url, "description": $0.description,
                    "events": $0.events.map(\.rawValue).joined(separator: ", "),
                    "status": $0.status.rawValue, "generation": $0.secretGeneration,
                    "created": ConsoleTime.text($0.createdAt),
                ] as [String: Any]
            },
            "hasRows": !rows.isEmpty, "canCreate": may(CreateWebhookEndpoint.action), "values": values,
            "events": WebhookEvent.allCases.map {
                ["name": $0.rawValue, "checked": values["event_\($0.rawValue)"] == "yes"]
            },
        ]
        if let (endpoint, secret) = shown { data["shown"] = ["url": endpoint.url, "secret": secret] }
        if let cursor { data["next"] = ConsoleLinks.path("/console/webhook-endpoints", ["cursor": cursor]) }
        FormRefusal(issues).add(to: &data)
        return page(
            "webhook_endpoints", title: "Webhook endpoints", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}
