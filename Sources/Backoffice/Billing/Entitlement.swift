import BackofficePlatform
import Foundation
import PostgresNIO

/// Whether a customer has the premium features now, until when and why, as the subscription records
/// say (the app's read):
/// - `trialing`, `active`: premium until the period's end (a renewal is charged then);
/// - `canceling`: active, canceled by the customer at period end: premium until then, not renewed;
/// - `past_due`: a renewal declined and retried on the dunning schedule: premium during the grace
///   period, until the last retry;
/// - `none` (never subscribed, or the first charge unanswered), `canceled`, `lapsed`: not premium.
package struct Entitlement: Sendable, Equatable, RowDecodable {
    package enum Reason: String, Sendable, CaseIterable {
        case trialing, active, canceling, pastDue = "past_due", none, canceled, lapsed
    }

    package let customerID: UUID
    package let premium: Bool
    package let until: Date?
    package let reason: Reason
    package let subscriptionID: UUID?
    package let plan: String?
    let version: Int64?

    package static let columns = """
        c.id, s.id, s.plan, s.status, s.cancel_at_period_end, s.current_period_end, s.grace_ends_at, s.version
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID?, String?, String?, Bool?, Date?, Date?, Int64?).self)
        (customerID, subscriptionID, plan, version) = (c.0, c.1, c.2, c.7)
        switch (try c.3.map { try SubscriptionRecord.Status(known: $0) }, c.4 ?? false) {
        case (.trialing?, _): (premium, until, reason) = (true, c.5, .trialing)
        case (.active?, false): (premium, until, reason) = (true, c.5, .active)
        case (.active?, true): (premium, until, reason) = (true, c.5, .canceling)
        case (.pastDue?, _): (premium, until, reason) = (true, c.6, .pastDue)
        case (.canceled?, _): (premium, until, reason) = (false, nil, .canceled)
        case (.lapsed?, _): (premium, until, reason) = (false, nil, .lapsed)
        case (.incomplete?, _), (nil, _): (premium, until, reason) = (false, nil, .none)
        }
    }

    /// Changes whenever the answer does (the subscription's version names every change of it).
    package var etag: String {
        EntityTag.digest("entitlement", [customerID.text, subscriptionID?.text ?? "-", "\(version ?? 0)"])
    }
}

/// The customer's entitlement (`entitlements.read`), one statement: the customer (404 when unknown
/// or deleted) and their live subscription, else their latest one.
package struct GetEntitlement: Query {
    package static let action: Action = "entitlements.read"
    let customerID: UUID
    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> Entitlement {
        try await unit.one(
            """
            SELECT \(unescaped: Entitlement.columns)
            FROM customers c
            LEFT JOIN LATERAL (
                SELECT id, plan, status, cancel_at_period_end, current_period_end, grace_ends_at, version
                FROM subscriptions WHERE customer_id = c.id
                ORDER BY status IN ('incomplete', 'trialing', 'active', 'past_due') DESC, created_at DESC LIMIT 1
            ) s ON true
            WHERE c.id = \(customerID) AND c.status <> 'deleted'
            """, as: Entitlement.self, else: DomainError.notFound("Customer \(customerID.text)"))
    }
}
