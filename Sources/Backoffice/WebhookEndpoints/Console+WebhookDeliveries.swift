import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// An endpoint's page (its deliveries, newest first, by status) and a delivery's page (the body
    /// it posts, every attempt, and the replay for who may): the API's reads and its replay, with
    /// its policy and audit.
    func registerWebhookDeliveries(on group: RouterGroup<AppRequestContext>) {
        get("webhook-endpoints/{id}", on: group) { console in try await console.webhookEndpointPage(console.routeID()) }
        get("webhook-deliveries/{id}", on: group) { console in
            try await console.webhookDeliveryPage(console.routeID(), issues: [])
        }
        post("webhook-deliveries/{id}/replay", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                let delivery = try await console.run(ReplayWebhookDelivery(id: id))
                return console.redirect(
                    "/console/webhook-deliveries/\(id.text)",
                    flash: "Delivery #\(delivery.sequence) replayed: it is sent again within seconds.")
            } refused: { issues in
                try await console.webhookDeliveryPage(id, issues: issues)
            }
        }
    }
}

extension ConsoleRequest {
    /// The endpoint's facts and a page of its deliveries, newest first, of the status tab chosen.
    fileprivate func webhookEndpointPage(_ id: UUID) async throws -> ConsoleAnswer {
        let endpoint = try await read(GetByID<WebhookEndpoint>(id: id))
        let status = try form.text("status").map { try WebhookDelivery.Status(known: $0) }
        let rows = try await read(
            ListWebhookDeliveries(
                endpointID: id, status: status, before: try Cursor.number(form.text("before")),
                limit: Console.pageSize + 1))
        let path = "/console/webhook-endpoints/\(id.text)"
        var data: [String: Any] = [
            "endpoint": [
                "url": endpoint.url, "status": endpoint.status.rawValue,
                "events": endpoint.events.map(\.rawValue).joined(separator: ", "),
            ].merging(endpoint.description.isEmpty ? [:] : ["description": endpoint.description]) { $1 },
            "rows": rows.prefix(Console.pageSize).map(view),
            "hasRows": !rows.isEmpty,
            "tabsHTML": ConsoleNavigation.links(
                ([nil] + WebhookDelivery.Status.allCases.map(Optional.some)).map {
                    .link(
                        href: ConsoleLinks.path(path, ["status": $0?.rawValue]),
                        label: $0?.rawValue.capitalized ?? "All", current: $0 == status)
                }),
        ]
        if rows.count > Console.pageSize, let last = rows.prefix(Console.pageSize).last {
            data["older"] = ConsoleLinks.path(
                path, ["status": status?.rawValue, "before": Cursor.encode([String(last.sequence)])])
        }
        return page("webhook_endpoint", title: "Webhook endpoint", data)
    }

    /// The delivery, the body it posts, its attempts, and the replay for who may.
    fileprivate func webhookDeliveryPage(_ id: UUID, issues: [FieldIssue]) async throws -> ConsoleAnswer {
        let detail = try await read(GetWebhookDelivery(id: id))
        var data: [String: Any] = [
            "delivery": view(detail.delivery), "body": detail.body,
            "attempts": detail.attempts.map { attempt in
                [
                    "number": attempt.number, "at": ConsoleTime.text(attempt.attemptedAt),
                    "duration": "\(attempt.durationMilliseconds) ms",
                    "answer": attempt.status.map { "HTTP \($0)" } ?? "no answer",
                    "response": attempt.response ?? "", "error": attempt.error ?? "",
                ] as [String: Any]
            },
            "hasAttempts": !detail.attempts.isEmpty, "canReplay": may(ReplayWebhookDelivery.action),
        ]
        FormRefusal(issues).add(to: &data)
        return page(
            "webhook_delivery", title: "Webhook delivery", status: issues.isEmpty ? .ok : .conflict, data)
    }
}

/// A delivery as the console's pages show it: its last attempt in a few words (its status, or
/// its error).
private func view(_ delivery: WebhookDelivery) -> [String: Any] {
    let answer = delivery.lastStatus.map { "HTTP \($0)" } ?? delivery.lastError ?? "not tried yet"
    var shown: [String: Any] = [
        "id": delivery.id.text, "endpointID": delivery.endpointID.text, "sequence": delivery.sequence,
        "type": delivery.eventType.rawValue, "status": delivery.status.rawValue, "attempts": delivery.attempts,
        "last": String(answer.prefix(120)),
    ]
    shown["next"] = delivery.nextAttemptAt.map(ConsoleTime.text)
    shown["delivered"] = delivery.deliveredAt.map(ConsoleTime.text)
    return shown
}
