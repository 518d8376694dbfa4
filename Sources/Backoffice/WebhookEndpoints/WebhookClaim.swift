import BackofficePlatform
import Foundation
import PostgresNIO

/// A webhook delivery claimed for one attempt: its endpoint, its event, and the body it posts.
struct WebhookClaim: Sendable {
    let tenantID: UUID
    let id: UUID
    let endpoint: WebhookEndpoint
    let eventID: UUID
    let type: String
    /// `{"id", "type", "created", "data"}`: the event as the receiver reads it.
    let payload: Data
    /// Its attempt now included.
    let attempts: Int
    /// When it was made, or last replayed: it is retried for `giveUpAfter` from then.
    let retriedSince: Date
    /// When it was claimed: the time its attempt is signed at.
    let claimedAt: Date

    /// What an attempt came to: the receiver's status and the start of its answer, or the error.
    enum Outcome: Sendable, Equatable {
        case delivered(status: Int, response: String)
        case failed(status: Int?, response: String?, error: String?)
    }

    /// The first pending delivery of an enabled endpoint whose earlier deliveries are all done,
    /// due now and held by no one (oldest due first), claimed for `settings.claimSeconds`; nil
    /// when there is none. Each enabled endpoint's head is found by one probe of the pending
    /// deliveries' index, so a claim costs as much with a backlog of 100,000 as with none (asking
    /// each pending delivery whether an earlier one waits took 19 ms at 8,000). A head another
    /// process holds is skipped (`SKIP LOCKED`), and its endpoint with it: never the one behind.
    static func next(_ settings: WebhookSettings, in unit: UnitOfWork) async throws -> WebhookClaim? {
        let until = unit.now.addingTimeInterval(Double(settings.claimSeconds))
        return try await unit.all(
            """
            WITH claimed AS (
                UPDATE webhook_deliveries d SET claimed_until = \(until), attempts = d.attempts + 1,
                    last_attempt_at = \(unit.now)
                WHERE (d.tenant_id, d.id) IN (
                    SELECT c.tenant_id, c.id FROM webhook_endpoints e
                    CROSS JOIN LATERAL (
                        SELECT h.id FROM webhook_deliveries h WHERE h.endpoint_id = e.id AND h.status = 'pending'
                        ORDER BY h.seq LIMIT 1) head
                    JOIN webhook_deliveries c ON c.tenant_id = e.tenant_id AND c.id = head.id
                    WHERE e.status = 'enabled' AND c.status = 'pending' AND c.due_at <= \(unit.now)
                      AND (c.claimed_until IS NULL OR c.claimed_until <= \(unit.now))
                    ORDER BY c.due_at, c.seq LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
                RETURNING d.tenant_id, d.id, d.endpoint_id, d.event_id, d.attempts,
                    coalesce(d.replayed_at, d.created_at) AS since
            )
            SELECT c.tenant_id, c.id, c.event_id, c.attempts, c.since, v.type, v.data::text, v.created_at,
                \(unescaped: WebhookEndpoint.columns(of: "e"))
            FROM claimed c JOIN webhook_events v ON v.tenant_id = c.tenant_id AND v.id = c.event_id
            JOIN webhook_endpoints e ON e.tenant_id = c.tenant_id AND e.id = c.endpoint_id
            """
        ) { row in try WebhookClaim(row: row, claimedAt: unit.now) }.first
    }

    init(row: PostgresRow, claimedAt: Date) throws {
        self.claimedAt = claimedAt
        let cells = row.makeRandomAccess()
        tenantID = try cells[0].decode(UUID.self)
        id = try cells[1].decode(UUID.self)
        eventID = try cells[2].decode(UUID.self)
        attempts = try cells[3].decode(Int.self)
        retriedSince = try cells[4].decode(Date.self)
        type = try cells[5].decode(String.self)
        let data = try cells[6].decode(String.self)
        let created = try cells[7].decode(Date.self)
        payload = Data(WebhookDelivery.body(eventID: eventID, type: type, created: created, data: data).utf8)
        endpoint = try WebhookEndpoint(cells, from: 8)
    }

    /// Records `outcome` of this attempt, which took `duration` (kept as a `WebhookAttempt`); a
    /// failure past `settings.giveUpAfter` fails the delivery and disables its endpoint (audited,
    /// and mailed to the shop's admins).
    func record(_ outcome: Outcome, took duration: Duration, settings: WebhookSettings, in unit: UnitOfWork)
        async throws
    {
        let milliseconds = Int(PoolLimits.milliseconds(duration))
        let (status, response, error): (Int?, String?, String?) =
            switch outcome {
            case .delivered(let status, let response): (status, response, nil)
            case .failed(let status, let response, let error): (status, response, error)
            }
        try await unit.execute(
            """
            INSERT INTO webhook_attempts
                (tenant_id, delivery_id, number, attempted_at, duration_ms, status, response, error)
            VALUES (\(tenantID), \(id), \(attempts), \(claimedAt), \(max(milliseconds, 0)), \(status), \(response),
                \(error))
            """)
        switch outcome {
        case .delivered(let status, let response):
            try await unit.execute(
                """
                UPDATE webhook_deliveries SET status = 'delivered', delivered_at = \(unit.now), claimed_until = NULL,
                    last_status = \(status), last_response = \(response), last_error = NULL
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
        case .failed(let status, let response, let error):
            let giveUp = unit.now >= retriedSince.addingTimeInterval(settings.giveUpAfter)
            let due = unit.now.addingTimeInterval(WebhookBackoff.wait(afterAttempt: attempts))
            try await unit.execute(
                """
                UPDATE webhook_deliveries SET status = \(giveUp ? "failed" : "pending"), claimed_until = NULL,
                    due_at = \(due), last_status = \(status), last_response = \(response), last_error = \(error)
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
            if giveUp { try await WebhookEndpointFailure.disable(endpoint, after: self, in: unit) }
        }
    }
}
