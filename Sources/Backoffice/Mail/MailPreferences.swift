import BackofficePlatform
import Foundation
import PostgresNIO

extension QueuedMail.Kind {
    /// An order became paid: a new order for the shop to handle (queued by the database, `webhook_order_events`).
    static let newOrder: Self = "new_order"
    /// A good's stock fell to its low-stock line (queued by the database, `webhook_good_events`).
    static let lowStock: Self = "low_stock"
    /// A moderation case is open at severity 3 (queued by the database, `mail_urgent_case`).
    static let urgentCase: Self = "urgent_case"
}

/// A notification mail an operator may choose to get: a topic (table `mail_topics`, which names
/// the roles it is offered to) and whether the operator gets it. A topic's mail is of the kind
/// of the same name, so a mail's unsubscribe link names its topic.
package struct MailPreference: Sendable, Equatable {
    package let topic: String
    package let subscribed: Bool

    /// What the Security page and the API say the topic is.
    package var description: String { Self.descriptions[topic] ?? topic.replacingOccurrences(of: "_", with: " ") }

    static let descriptions = [
        QueuedMail.Kind.newOrder.rawValue: "A new order to handle: an order of your shop was paid.",
        QueuedMail.Kind.lowStock.rawValue: "Low stock: a good's stock fell to 5 or fewer.",
        QueuedMail.Kind.webhookEndpointDisabled.rawValue:
            "A failed webhook endpoint: deliveries failed for three days and it was disabled.",
        QueuedMail.Kind.urgentCase.rawValue:
            "An urgent case: a moderation case is open at severity 3 (urgent) or 4 (critical).",
        QueuedMail.Kind.dailySummary.rawValue:
            "A day's summary, each morning (UTC): the day's orders, sales and refunds, and what waits now.",
        QueuedMail.Kind.appealsWaiting.rawValue: "Appeals waiting, each morning (UTC) when there are any.",
    ]
}

/// The calling operator's mail topics (those its role is offered, by name) and whether it gets
/// each (`mail_preferences.read`); a topic it never chose is on.
package struct ReadMailPreferences: Query {
    package static let action: Action = "mail_preferences.read"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> [MailPreference] {
        try await MailPreferences.current(role: unit.principal.role, in: unit)
    }
}

/// An operator turns mail topics on or off (`mail_preferences.update`, one audit event with the
/// topics before and after). A topic its role is not offered, or one named twice, is refused (422
/// `topics`) and changes nothing; choices already in place change nothing and record nothing.
/// Acts for the transaction's operator: the signed-in one, or the one an unsubscribe link names
/// (`reason` says which); one change per operator at a time, so 30 clicks of one link record one.
package struct SetMailPreferences: AuditedOperation {
    package static let action: Action = "mail_preferences.update"
    let choices: [(topic: String, subscribed: Bool)]
    let reason: String?

    package init(choices: [(topic: String, subscribed: Bool)], reason: String? = nil) {
        (self.choices, self.reason) = (choices, reason)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<[MailPreference]> {
        let tenantID = unit.principal.tenantID
        guard let operatorID = unit.principal.operatorID else {
            throw DomainError.forbiddenTarget(
                Self.action, code: "operator_only", detail: "Only an operator chooses its mail.")
        }
        // One change per operator at a time: what is in place is read under the lock.
        try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('mail_preferences:' || \(operatorID.text)))")
        let before = try await MailPreferences.current(role: unit.principal.role, in: unit)
        let offered = Set(before.map(\.topic))
        let named = choices.map(\.topic)
        if let wrong = named.first(where: { !offered.contains($0) }) ?? duplicate(in: named) {
            throw DomainError.invalid([
                FieldIssue(
                    field: "topics", code: "unknown_topic",
                    message: "\(wrong.debugDescription) is not a topic offered to you, or is named twice")
            ])
        }
        let changed = choices.filter { choice in
            before.contains { $0.topic == choice.topic && $0.subscribed != choice.subscribed }
        }
        guard !changed.isEmpty else { return .unchanged(before) }
        for choice in changed {
            try await unit.execute(
                """
                INSERT INTO mail_preferences (tenant_id, operator_id, topic, subscribed, updated_at)
                VALUES (\(tenantID), \(operatorID), \(choice.topic), \(choice.subscribed), \(unit.now))
                ON CONFLICT (tenant_id, operator_id, topic)
                DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = EXCLUDED.updated_at
                """)
        }
        let after = try await MailPreferences.current(role: unit.principal.role, in: unit)
        let event = AuditRecord(
            action: Self.action, tenantID: tenantID, targetType: "operator", targetID: operatorID.text,
            reason: reason, before: try MailPreferences.snapshot(before), after: try MailPreferences.snapshot(after))
        return Audited(after, event: event)
    }

    private func duplicate(in topics: [String]) -> String? {
        var seen = Set<String>()
        return topics.first { !seen.insert($0).inserted }
    }
}

enum MailPreferences {
    /// The topics offered to `role`, by name, each on unless the transaction's operator turned it off.
    static func current(role: String, in unit: UnitOfWork) async throws -> [MailPreference] {
        try await unit.all(
            """
            SELECT t.topic, coalesce(p.subscribed, true) FROM mail_topics t
            LEFT JOIN mail_preferences p ON p.topic = t.topic AND p.operator_id = app_operator()
            WHERE \(role) = ANY (t.roles) ORDER BY t.topic
            """
        ) { row in
            let (topic, subscribed) = try row.decode((String, Bool).self)
            return MailPreference(topic: topic, subscribed: subscribed)
        }
    }

    static func snapshot(_ preferences: [MailPreference]) throws -> String {
        try AuditRecord.json(Dictionary(uniqueKeysWithValues: preferences.map { ($0.topic, $0.subscribed) }))
    }
}
