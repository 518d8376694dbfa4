import BackofficePlatform
import Foundation
import PostgresNIO

extension QueuedMail.Kind {
    /// A webhook endpoint was disabled after three days of failed deliveries: to the shop's admins.
    static let webhookEndpointDisabled: Self = "webhook_endpoint_disabled"
}

/// What happens to an endpoint whose delivery failed for `WebhookSettings.giveUpAfter`: it is
/// disabled (its pending deliveries wait), the system's audit event records it as the update an
/// admin would make (`webhook_endpoints.update`, by the system, with the reason), and every active
/// admin of the shop who did not turn this mail off (`mail_recipients`) is mailed.
enum WebhookEndpointFailure {
    static let action = UpdateWebhookEndpoint.action

    static func disable(_ endpoint: WebhookEndpoint, after claim: WebhookClaim, in unit: UnitOfWork) async throws {
        guard
            let after = try await unit.first(
                """
                UPDATE webhook_endpoints SET status = 'disabled', version = version + 1, updated_at = \(unit.now)
                WHERE tenant_id = \(endpoint.tenantID) AND id = \(endpoint.id) AND status = 'enabled'
                RETURNING \(unescaped: WebhookEndpoint.columns)
                """, as: WebhookEndpoint.self)
        else { return }  // disabled already (by another process's failure)
        let reason = "deliveries failed for three days (the last: event \(claim.eventID.text))"
        var events = [
            AuditRecord(
                action: action, tenantID: endpoint.tenantID, targetType: "webhook_endpoint",
                targetID: endpoint.id.text, reason: reason, before: try endpoint.snapshot, after: try after.snapshot
            ).bySystem
        ]
        let topic = QueuedMail.Kind.webhookEndpointDisabled.rawValue
        let admins = try await unit.all(
            "SELECT operator_id, email FROM mail_recipients(\(endpoint.tenantID), \(topic))"
        ) { try $0.decode((UUID, String).self) }
        for (id, email) in admins {
            let mail = QueuedMail(
                kind: .webhookEndpointDisabled, tenantID: endpoint.tenantID, recipient: email, operatorID: id,
                reference: endpoint.id, fields: ["url": endpoint.url, "event_id": claim.eventID.text])
            events.append(try await Outbox.queue(mail, in: unit).bySystem)
        }
        for event in AuditRecord.appendOrder(events) {
            try await event.append(context: unit.context, on: unit.connection, logger: unit.logger)
        }
    }
}
