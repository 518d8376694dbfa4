import BackofficePlatform
import Foundation
import PostgresNIO

/// Where a partner wants its shop's events sent: a URL that reaches only a public address
/// (`OutboundTarget`), the event types it wants, and the generation of its signing secret (the
/// secret itself is derived, never stored: `WebhookEndpointSecrets`).
package struct WebhookEndpoint: Sendable, Equatable, NewestFirst {
    package enum Status: String, Sendable, CaseIterable { case enabled, disabled }

    package var id: UUID
    package var tenantID: UUID
    package var url: String
    package var description: String
    package var events: [WebhookEvent]
    package var status: Status
    package var secretGeneration: Int
    /// Until when the previous generation's secret signs too (a roll's overlap), if it does.
    package var previousSecretUntil: Date?
    package var version: Int
    package var createdAt: Date
    package var updatedAt: Date

    package var listedAt: Date { createdAt }
}

/// The events a shop's endpoints can ask for.
package enum WebhookEvent: String, Sendable, CaseIterable, Codable {
    case orderPlaced = "order.placed"
    case orderPaid = "order.paid"
    case orderCancelled = "order.cancelled"
    case orderRefunded = "order.refunded"
    case goodLowStock = "good.low_stock"
}

/// How webhook endpoints are stored (`webhook_endpoints`, each tenant's own by row-level security).
extension WebhookEndpoint: RowDecodable {
    package static let columns = """
        id, tenant_id, url, description, events, status, secret_generation, previous_secret_until, version, \
        created_at, updated_at
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, String, String, [String], String, Int, Date?, Int, Date, Date).self)
        self.init(
            id: c.0, tenantID: c.1, url: c.2, description: c.3, events: try c.4.map(WebhookEvent.init(known:)),
            status: try Status(known: c.5), secretGeneration: c.6, previousSecretUntil: c.7,
            version: c.8, createdAt: c.9, updatedAt: c.10)
    }

    /// What an audit event keeps of it: never a secret.
    struct Snapshot: Encodable {
        let url: String
        let events: [String]
        let status: String
        let secretGeneration: Int
        let version: Int
    }

    var snapshot: String {
        get throws {
            try AuditRecord.json(
                Snapshot(
                    url: url, events: events.map(\.rawValue), status: status.rawValue,
                    secretGeneration: secretGeneration, version: version))
        }
    }
}
