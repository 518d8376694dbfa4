import BackofficeAPI
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// The customer's right of access (`privacy.export_customer_data`): one JSON document of everything
/// the back office holds about one customer, asked for by the app's backend on the customer's
/// request. The request is audited (`RecordCustomerDataExport`, in the request's transaction);
/// the document is then streamed section by section (`ExportPages`: each section read when the
/// client has taken the one before, in a read session that authenticates the token again), the
/// activity in pages of 5,000 events, so memory stays bounded however long the history.
///
/// Sections, in order: account, locks, appeals, login attempts, FitPoints (wallet and ledger),
/// activity, daily earnings, badges, challenge scores, orders with their lines (without what is
/// the shop's own: its tenant, payments, internal reasons and versions), the health profile with its
/// history (an access event committed first, then `health_profile_read`: the export's read is recorded,
/// via `export`, purpose `data_request`) and the access log's events for the customer. Staff
/// identities (who locked, who resolved) are left out: they are not the customer's data.
package enum CustomerDataExport {
    /// One section: its key in the document and the statement that writes its JSON.
    struct Section: Sendable {
        let key: String
        /// A statement run before `json`, as a transaction of its own (the health section's access
        /// event, which must commit before the read).
        var prelude: (@Sendable (UUID, OperationContext) -> PostgresQuery)? = nil
        let json: @Sendable (UUID, OperationContext) -> PostgresQuery
    }

    /// Where the stream is: the next section, and within the activity the last event sent.
    package struct Position: Sendable {
        var section: Int
        /// The last event's time (PostgreSQL's text form, exact to the microsecond) and id.
        var activityAfter: (at: String, id: String)?
    }

    static let activityPage = 5_000

    /// Every section but the activity's, which `activity` pages.
    static let sections: [Section] = [
        Section(key: "account") { id, _ in
            "SELECT (to_jsonb(c) - 'version')::text FROM customers c WHERE c.id = \(id)"
        },
        Section(key: "locks") { id, _ in
            """
            SELECT coalesce(jsonb_agg(to_jsonb(l) - 'locked_by' - 'lifted_by' - 'customer_id' ORDER BY l.locked_at),
                '[]')::text FROM account_locks l WHERE l.customer_id = \(id)
            """
        },
        Section(key: "notices") { id, _ in
            """
            SELECT coalesce(jsonb_agg(jsonb_build_object('subject', n.subject, 'body', n.body, 'sent_at', n.created_at)
                ORDER BY n.created_at), '[]')::text FROM account_notices n WHERE n.customer_id = \(id)
            """
        },
        Section(key: "appeals") { id, _ in
            """
            SELECT coalesce(jsonb_agg(to_jsonb(a) - 'resolved_by' - 'customer_id' ORDER BY a.created_at), '[]')::text
            FROM appeals a WHERE a.customer_id = \(id)
            """
        },
        Section(key: "plans") { id, _ in
            """
            SELECT jsonb_build_object(
                'requests', coalesce((SELECT jsonb_agg(jsonb_build_object('kind', r.kind, 'goal', r.goal,
                    'daily_calorie_goal', r.daily_calorie_goal, 'status', r.status, 'filed_at', r.filed_at,
                    'answered_at', r.answered_at) ORDER BY r.filed_at) FROM plan_requests r
                  WHERE r.customer_id = \(id)), '[]'),
                'sent', coalesce((SELECT jsonb_agg(jsonb_build_object('kind', p.kind, 'version', p.sent_version,
                    'sent_at', p.sent_at, 'note', v.note, 'schedule', v.schedule) ORDER BY p.sent_at)
                  FROM plans p JOIN plan_versions v ON v.plan_id = p.id AND v.version = p.sent_version
                  WHERE p.customer_id = \(id)), '[]'))::text
            """
        },
        Section(key: "login_attempts") { id, _ in
            """
            SELECT coalesce(jsonb_agg(jsonb_build_object('succeeded', a.succeeded, 'occurred_at', a.occurred_at)
                ORDER BY a.occurred_at), '[]')::text FROM login_attempts a WHERE a.customer_id = \(id)
            """
        },
        Section(key: "fitpoints") { id, _ in
            """
            SELECT jsonb_build_object(
                'balance', coalesce((SELECT balance FROM fitpoints_accounts WHERE id = \(id)), 0),
                'ledger', coalesce((SELECT jsonb_agg(jsonb_build_object('at', t.created_at, 'kind', t.kind,
                    'points', CASE WHEN t.credit_account = \(id) THEN t.amount ELSE -t.amount END, 'reason', t.reason)
                    ORDER BY t.created_at, t.id)
                  FROM fitpoints_transfers t WHERE t.credit_account = \(id) OR t.debit_account = \(id)), '[]'))::text
            """
        },
    ]

    /// The sections after the activity.
    static let laterSections: [Section] = [
        Section(key: "daily_earnings") { id, _ in
            """
            SELECT coalesce(jsonb_agg(to_jsonb(e) - 'customer_id' ORDER BY e.day, e.rule_id), '[]')::text
            FROM fitpoints_daily_earnings e WHERE e.customer_id = \(id)
            """
        },
        Section(key: "badges") { id, _ in
            """
            SELECT coalesce(jsonb_agg(to_jsonb(b) - 'customer_id' ORDER BY b.awarded_at), '[]')::text
            FROM badge_awards b WHERE b.customer_id = \(id)
            """
        },
        Section(key: "challenge_scores") { id, _ in
            """
            SELECT coalesce(jsonb_agg(to_jsonb(s) - 'customer_id' ORDER BY s.challenge_id), '[]')::text
            FROM challenge_scores s WHERE s.customer_id = \(id)
            """
        },
        Section(key: "orders") { id, _ in
            """
            SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'shop', t.name, 'status', o.status,
                'total_cents', o.total_cents, 'total_fitpoints', o.total_fitpoints, 'shipping_name', o.shipping_name,
                'shipping_address', o.shipping_address, 'carrier', o.carrier, 'tracking_number', o.tracking_number,
                'created_at', o.created_at, 'updated_at', o.updated_at,
                'lines', (SELECT jsonb_agg(jsonb_build_object('sku', l.sku, 'name', l.name, 'quantity', l.quantity,
                    'paid_in', l.paid_in, 'unit_price', l.unit_price) ORDER BY l.line)
                  FROM order_lines l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.id))
                ORDER BY o.created_at), '[]')::text
            FROM orders o JOIN tenants t ON t.id = o.tenant_id WHERE o.customer_id = \(id)
            """
        },
        Section(key: "subscriptions") { id, _ in
            """
            SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'plan', s.plan, 'price_cents', s.price_cents,
                'interval', s.billing_interval, 'status', s.status, 'current_period_start', s.current_period_start,
                'current_period_end', s.current_period_end, 'trial_ends_at', s.trial_ends_at,
                'cancel_at_period_end', s.cancel_at_period_end, 'created_at', s.created_at, 'ended_at', s.ended_at,
                'invoices', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'period_start', i.period_start,
                    'period_end', i.period_end, 'amount_cents', i.amount_cents, 'status', i.status,
                    'refunded_cents', i.refunded_cents, 'paid_at', i.paid_at) ORDER BY i.period_start), '[]')
                  FROM invoices i WHERE i.subscription_id = s.id))
                ORDER BY s.created_at), '[]')::text
            FROM subscriptions s WHERE s.customer_id = \(id)
            """
        },
        Section(
            key: "health_profile",
            prelude: { id, context in
                let principal = context.principal
                return """
                    SELECT health_access_append(\(id), \(principal.operatorID), 'data_request', 'export',
                        \(context.requestID), \(principal.tokenID), \(principal.sessionID))
                    """
            }
        ) { id, context in
            """
            SELECT coalesce((SELECT jsonb_build_object('version', r.version, 'synced_at', r.synced_at,
                'height_cm', r.height_cm, 'weight_kg', round(r.weight_hg / 10.0, 1), 'birth_year', r.birth_year,
                'sex', r.sex, 'weight_goal', r.weight_goal, 'target_weight_kg', round(r.target_weight_hg / 10.0, 1),
                'target_date', r.target_date, 'daily_calorie_goal', r.daily_calorie_goal,
                'activity_level', r.activity_level, 'history', r.history::jsonb)::text
              FROM health_profile_read((SELECT max(e.id) FROM health_access_events e WHERE e.customer_id = \(id)
                AND e.request_id = \(context.requestID) AND e.via = 'export'), 2147483647) r), 'null')
            """
        },
        Section(key: "health_profile_accesses") { id, _ in
            """
            SELECT coalesce(jsonb_agg(jsonb_build_object('at', e.occurred_at, 'actor_id', e.actor_id,
                'actor_role', e.actor_role, 'purpose', e.purpose, 'via', e.via) ORDER BY e.id), '[]')::text
            FROM health_access_events e WHERE e.customer_id = \(id)
            """
        },
    ]

    /// The document for `customerID`, streamed: `{"customer_id": …, "exported_at": …`, each section,
    /// then `}`.
    static func pages(customerID: UUID, at now: Date, database: Database, context: OperationContext)
        -> ExportPages<Position>
    {
        let head = #"{"customer_id":"\#(customerID.text)","exported_at":"\#(RFC3339DateTranscoder.format(now))""#
        let logger = database.logger
        return ExportPages(
            database: database, context: context, start: Array(head.utf8), after: Position(section: 0)
        ) { position, context in
            let all = sections.count + 1 + laterSections.count
            if position.section == sections.count {
                return try await activity(customerID, position, context, logger: database.logger)
            }
            let section =
                position.section < sections.count
                ? sections[position.section] : laterSections[position.section - sections.count - 1]
            if let prelude = section.prelude {
                for try await _ in try await context.connection.send(prelude(customerID, context), logger: logger) {}
            }
            var json = "null"
            for try await text in try await context.connection.send(
                section.json(customerID, context), logger: logger
            ).decode(String?.self) {
                json = text ?? "null"
            }
            let bytes = Array(",\"\(section.key)\":\(json)".utf8) + (position.section + 1 == all ? [125] : [])
            return (bytes, position.section + 1 == all ? nil : Position(section: position.section + 1))
        }
    }

    /// One page of the activity section, oldest first (its opening bracket with the first page,
    /// its closing one with the last).
    private static func activity(
        _ id: UUID, _ position: Position, _ context: OperationContext, logger: Logger
    ) async throws -> (bytes: [UInt8], next: Position?) {
        let after = position.activityAfter
        var bytes = Array((after == nil ? ",\"activity\":[" : "").utf8)
        var (count, last) = (0, after)
        for try await (at, eventID, json) in try await context.connection.send(
            """
            SELECT occurred_at::text, event_id::text, (to_jsonb(a) - 'customer_id' - 'batch_id')::text
            FROM activity_events a
            WHERE customer_id = \(id) AND (\(after?.at)::text IS NULL OR (occurred_at, event_id::text) >
                (\(after?.at)::timestamptz, \(after?.id)))
            ORDER BY occurred_at, event_id::text LIMIT \(activityPage)
            """, logger: logger
        ).decode((String, String, String).self) {
            if count > 0 || after != nil { bytes.append(44) }
            bytes.append(contentsOf: json.utf8)
            (count, last) = (count + 1, (at, eventID))
        }
        guard count == activityPage else {
            bytes.append(93)
            return (bytes, Position(section: position.section + 1))
        }
        return (bytes, Position(section: position.section, activityAfter: last))
    }
}

/// Records the customer's data export (`privacy.export_customer_data`): one audit event, in the
/// request's transaction, before the document streams. A deleted customer's data can still be
/// asked for until it is purged; an unknown customer is 404.
package struct ExportCustomerData: AuditedOperation {
    package static let action: Action = "privacy.export_customer_data"
    let database: Database
    let customerID: UUID

    package init(database: Database, customerID: UUID) {
        (self.database, self.customerID) = (database, customerID)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ExportPages<CustomerDataExport.Position>> {
        _ = try await Customer.fetch(customerID, in: unit)
        struct Exported: Encodable { let sections: [String] }
        let sections =
            CustomerDataExport.sections.map(\.key) + ["activity"] + CustomerDataExport.laterSections.map(\.key)
        return Audited(
            CustomerDataExport.pages(customerID: customerID, at: unit.now, database: database, context: unit.context),
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: customerID.text,
                reason: "the customer's request", before: nil, after: try AuditRecord.json(Exported(sections: sections))
            ))
    }
}
