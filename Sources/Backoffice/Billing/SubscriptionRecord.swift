import BackofficePlatform
import Foundation
import PostgresNIO

/// The record of a customer's subscription to a plan (table `subscriptions`; `Subscription` is the
/// state the app syncs): its price and interval as they
/// were when it began, its status, its current period, and the provider's token for the payment
/// method its invoices are charged to.
package struct SubscriptionRecord: Sendable, Equatable, RowDecodable {
    package enum Status: String, Sendable, CaseIterable {
        case incomplete, trialing, active, pastDue = "past_due", canceled, lapsed
    }

    package let id: UUID
    package let customerID: UUID
    package let plan: String
    package let priceCents: Int64
    package let interval: BillingInterval
    package let status: Status
    package let currentPeriod: Range<Date>?
    package let trialEndsAt: Date?
    /// Where its billing periods are counted from (`BillingCycle`); nil until it is first paid.
    package let anchor: Date?
    /// While `past_due`: when access ends unless a retry is paid (the schedule's last retry).
    package let graceEndsAt: Date?
    package let cancelAtPeriodEnd: Bool
    /// Left over from a change of plan: taken off the invoices that follow.
    package let creditCents: Int64
    package let updatedAt: Date
    package let version: Int64

    package static let columns = """
        id, customer_id, plan, price_cents, billing_interval, status, current_period_start, current_period_end,
        trial_ends_at, anchor, grace_ends_at, cancel_at_period_end, credit_cents, updated_at, version
        """

    /// `columns`, each qualified by `table` (a statement that joins another table).
    static func columns(of table: String) -> String {
        columns.split(separator: ",").map { table + "." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .joined(separator: ", ")
    }

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (UUID, UUID, String, Int64, String, String, Date?, Date?, Date?, Date?, Date?, Bool, Int64, Date, Int64)
                .self
        )
        (id, customerID, plan, priceCents) = (c.0, c.1, c.2, c.3)
        (interval, status) = (try BillingInterval(known: c.4), try Status(known: c.5))
        currentPeriod = c.6.flatMap { start in c.7.map { start..<$0 } }
        (trialEndsAt, anchor, graceEndsAt, cancelAtPeriodEnd) = (c.8, c.9, c.10, c.11)
        (creditCents, updatedAt, version) = (c.12, c.13, c.14)
    }

    /// The subscription `id`, locked for the change that reads it when `forUpdate`.
    static func fetch(_ id: UUID, forUpdate: Bool, in unit: UnitOfWork) async throws -> SubscriptionRecord {
        try await unit.one(
            """
            SELECT \(unescaped: columns) FROM subscriptions WHERE id = \(id) \(unescaped: forUpdate ? "FOR UPDATE" : "")
            """, as: SubscriptionRecord.self, else: DomainError.notFound("Subscription \(id.text)"))
    }

    /// What the audit event records of it (no payment method: the provider's reference stays in its table).
    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let customer_id: String, plan: String, price_cents: Int64, interval: String, status: String
                let current_period_start: Date?, current_period_end: Date?, trial_ends_at: Date?
                let grace_ends_at: Date?, cancel_at_period_end: Bool, version: Int64
            }
            return try AuditRecord.json(
                Snapshot(
                    customer_id: customerID.text, plan: plan, price_cents: priceCents, interval: interval.rawValue,
                    status: status.rawValue, current_period_start: currentPeriod?.lowerBound,
                    current_period_end: currentPeriod?.upperBound, trial_ends_at: trialEndsAt,
                    grace_ends_at: graceEndsAt, cancel_at_period_end: cancelAtPeriodEnd, version: version))
        }
    }
}
