import BackofficePlatform
import Foundation
import PostgresNIO

/// One event's delivery to one endpoint, as its shop reads it: where it stands, and what its last
/// attempt came to (every attempt is kept: `WebhookAttempt`).
package struct WebhookDelivery: Sendable, Equatable {
    package enum Status: String, Sendable, CaseIterable { case pending, delivered, failed }

    package var id, tenantID, endpointID, eventID: UUID
    package var eventType: WebhookEvent
    /// Its place in its endpoint's order: deliveries are sent in this order.
    package var sequence: Int64
    package var status: Status
    package var attempts: Int
    /// When it is tried next (pending only); when it was replayed last (it is given three days
    /// again from then).
    package var nextAttemptAt, lastAttemptAt, deliveredAt, replayedAt: Date?
    package var lastStatus: Int?
    /// The start of the receiver's last answer (1,000 characters at most), or why it gave none.
    package var lastResponse, lastError: String?
    package var createdAt: Date

    /// The body a delivery posts: `{"id", "type", "created", "data"}`, the event as the receiver
    /// reads it (`data` is the event's stored JSON, as it is).
    static func body(eventID: UUID, type: String, created: Date, data: String) -> String {
        #"{"id":"\#(eventID.text)","type":"\#(type)","created":\#(Int(created.timeIntervalSince1970)),"data":\#(data)}"#
    }
}

/// One attempt of a delivery: when, how long it took, and the receiver's status and the start of
/// its answer, or the error (a refused address, a timeout).
package struct WebhookAttempt: Sendable, Equatable, Decodable {
    package var number, durationMilliseconds: Int
    package var attemptedAt: Date
    package var status: Int?
    package var response, error: String?

    enum CodingKeys: String, CodingKey {
        case number, durationMilliseconds = "duration_ms", attemptedAt = "at", status, response, error
    }
}

/// A delivery with the body it posts and all its attempts, oldest first, read in one statement
/// (`GetWebhookDelivery`).
package struct WebhookDeliveryDetail: Sendable, ReadByID {
    package var delivery: WebhookDelivery
    package var body: String
    package var attempts: [WebhookAttempt]

    package static let (table, alias, noun) = (WebhookDelivery.table, Optional("d"), "Webhook delivery")
    package static let readAction: Action = "webhook_deliveries.list"
    package static let columns =
        WebhookDelivery.columns + """
            , v.data::text, v.created_at, (
                SELECT coalesce(json_agg(json_build_object('number', a.number, 'at', extract(epoch FROM a.attempted_at),
                    'duration_ms', a.duration_ms, 'status', a.status, 'response', a.response, 'error', a.error)
                    ORDER BY a.number), '[]')
                FROM webhook_attempts a WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id)::text
            """

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "webhook delivery")
        delivery = try WebhookDelivery(cells: &cells)
        let (data, created): (String, Date) = (try cells.next(), try cells.next())
        body = WebhookDelivery.body(
            eventID: delivery.eventID, type: delivery.eventType.rawValue, created: created, data: data)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        attempts = try decoder.decode([WebhookAttempt].self, from: Data(try cells.next(String.self).utf8))
    }
}

/// A delivery with the body it posts and every attempt (`webhook_deliveries.list`).
package typealias GetWebhookDelivery = GetByID<WebhookDeliveryDetail>

/// How deliveries are read: joined with their event for its type (`webhook_deliveries d`,
/// `webhook_events v`; each tenant's own by row-level security).
extension WebhookDelivery: ReadByID {
    package static let (alias, readAction): (String?, Action) = ("d", "webhook_deliveries.list")
    package static let table = """
        webhook_deliveries d JOIN webhook_events v ON v.tenant_id = d.tenant_id AND v.id = d.event_id
        """
    package static let columns = """
        d.id, d.tenant_id, d.endpoint_id, d.event_id, v.type, d.seq, d.status, d.attempts, \
        CASE WHEN d.status = 'pending' THEN d.due_at END, d.last_attempt_at, d.last_status, d.last_response, \
        d.last_error, d.delivered_at, d.replayed_at, d.created_at
        """

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "webhook delivery")
        try self.init(cells: &cells)
    }

    init(cells: inout RowCells) throws {
        (id, tenantID, endpointID, eventID) = (try cells.next(), try cells.next(), try cells.next(), try cells.next())
        eventType = try WebhookEvent(known: try cells.next(String.self))
        (sequence, status) = (try cells.next(), try Status(known: try cells.next(String.self)))
        (attempts, nextAttemptAt, lastAttemptAt) = (try cells.next(), try cells.next(), try cells.next())
        (lastStatus, lastResponse, lastError) = (try cells.next(), try cells.next(), try cells.next())
        (deliveredAt, replayedAt, createdAt) = (try cells.next(), try cells.next(), try cells.next())
    }

    /// What an audit event keeps of it.
    struct Snapshot: Encodable {
        let endpointID, eventID, status: String
        let attempts: Int
    }

    var snapshot: String {
        get throws {
            try AuditRecord.json(
                Snapshot(
                    endpointID: endpointID.text, eventID: eventID.text, status: status.rawValue, attempts: attempts))
        }
    }
}

/// A page of an endpoint's deliveries, newest first (by their place in its order), before
/// `before` and of one status if asked (`webhook_deliveries.list`). Another shop's endpoint is 404.
package struct ListWebhookDeliveries: Query {
    package static let action: Action = "webhook_deliveries.list"
    package let endpointID: UUID
    package let status: WebhookDelivery.Status?
    package let before: Int64?
    package let limit: Int

    package init(endpointID: UUID, status: WebhookDelivery.Status?, before: Int64?, limit: Int) {
        (self.endpointID, self.status, self.before, self.limit) = (endpointID, status, before, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [WebhookDelivery] {
        let endpoint = try await WebhookEndpoint.fetch(endpointID, in: unit)
        return try await unit.all(
            """
            SELECT \(unescaped: WebhookDelivery.columns) FROM \(unescaped: WebhookDelivery.table)
            WHERE d.tenant_id = \(endpoint.tenantID) AND d.endpoint_id = \(endpointID)
              AND d.seq < \(before ?? Int64.max)
              AND (\(status?.rawValue)::text IS NULL OR d.status = \(status?.rawValue))
            ORDER BY d.seq DESC LIMIT \(limit)
            """)
    }
}

/// A partner admin sends a delivery again (`webhook_deliveries.replay`): whatever came of it, it
/// is pending again, due now, with the same event id (a receiver that kept it drops the repeat),
/// and retried for three days from now. It keeps its place in its endpoint's order, so later
/// pending deliveries wait for it. A disabled endpoint's delivery is 409 `endpoint_disabled`:
/// enable the endpoint first.
package struct ReplayWebhookDelivery: AuditedOperation {
    package static let action: Action = "webhook_deliveries.replay"
    package let id: UUID

    package init(id: UUID) { self.id = id }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WebhookDelivery> {
        let before = try await WebhookDelivery.fetch(id, forUpdate: true, in: unit)
        let endpoint = try await WebhookEndpoint.fetch(before.endpointID, in: unit)
        guard endpoint.status == .enabled else {
            throw DomainError.conflict(
                code: "endpoint_disabled", detail: "Its endpoint is disabled: enable it first, then replay.")
        }
        try await unit.execute(
            """
            UPDATE webhook_deliveries SET status = 'pending', due_at = \(unit.now), replayed_at = \(unit.now)
            WHERE tenant_id = \(before.tenantID) AND id = \(id)
            """)
        let after = try await WebhookDelivery.fetch(id, in: unit)
        let event = AuditRecord(
            action: Self.action, tenantID: after.tenantID, targetType: "webhook_delivery", targetID: id.text,
            reason: "replayed after \(before.attempts) attempt(s), \(before.status.rawValue)",
            before: try before.snapshot, after: try after.snapshot)
        return Audited(after, event: event)
    }
}
