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

    package init(row: PostgresRow) throws { try self.init(row.makeRandomAccess(), from: 0) }

    /// The endpoint from `columns` read from cell `start` of a row that joins it.
    init(_ cells: PostgresRandomAccessRow, from start: Int) throws {
        func cell<T: PostgresDecodable>(_ offset: Int, _ type: T.Type = T.self) throws -> T {
            try cells[start + offset].decode(T.self)
        }
        self.init(
            id: try cell(0), tenantID: try cell(1), url: try cell(2), description: try cell(3),
            events: try cell(4, [String].self).map(WebhookEvent.init(known:)),
            status: try Status(known: try cell(5, String.self)), secretGeneration: try cell(6),
            previousSecretUntil: try cell(7), version: try cell(8), createdAt: try cell(9), updatedAt: try cell(10))
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
