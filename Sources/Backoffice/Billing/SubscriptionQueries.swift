import BackofficePlatform
import Foundation
import PostgresNIO

extension SubscriptionRecord: NewestFirst {
    package var listedAt: Date { updatedAt }
}

/// Subscriptions, the latest changed first (`subscriptions.list`), by status and customer.
package struct ListSubscriptions: Query {
    package static let action: Action = "subscriptions.list"
    let status: SubscriptionRecord.Status?
    let customerID: UUID?
    let after: (Date, UUID)?
    let limit: Int

    package init(status: SubscriptionRecord.Status?, customerID: UUID?, after: (Date, UUID)?, limit: Int) {
        (self.status, self.customerID, self.after, self.limit) = (status, customerID, after, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [SubscriptionRecord] {
        let start = after ?? (Date.distantFuture, platformTenantID)
        return try await unit.all(
            """
            SELECT \(unescaped: SubscriptionRecord.columns) FROM subscriptions
            WHERE (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue))
                AND (\(customerID)::uuid IS NULL OR customer_id = \(customerID))
                AND (updated_at, id) < (\(start.0), \(start.1))
            ORDER BY updated_at DESC, id DESC LIMIT \(limit)
            """)
    }
}

/// An invoice of a subscription, with its refunds.
package struct InvoiceRecord: Sendable, RowDecodable {
    package let id: UUID
    package let periodStart: Date
    package let periodEnd: Date
    package let amountCents: Int64
    package let status: String
    package let attempts: Int
    package let nextAttemptAt: Date?
    package let failureCode: String?
    package let refundedCents: Int64
    package let paidAt: Date?
    package let createdAt: Date
    /// A chargeback, when the provider told of one: its status, amount, reason and when it opened.
    package let dispute: (status: String, cents: Int64, reason: String?, openedAt: Date)?
    package var refunds: [InvoiceRefund] = []

    package static let columns = """
        id, period_start, period_end, amount_cents, status, attempts, next_attempt_at, failure_code, refunded_cents,
        paid_at, created_at, dispute_status, disputed_cents, dispute_reason, disputed_at
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (
                UUID, Date, Date, Int64, String, Int32, Date?, String?, Int64, Date?, Date, String?, Int64?, String?,
                Date?
            )
            .self)
        (id, periodStart, periodEnd, amountCents, status, attempts) = (c.0, c.1, c.2, c.3, c.4, Int(c.5))
        (nextAttemptAt, failureCode, refundedCents, paidAt, createdAt) = (c.6, c.7, c.8, c.9, c.10)
        dispute = c.11.flatMap { status in c.12.flatMap { cents in c.14.map { (status, cents, c.13, $0) } } }
    }
}

/// One subscription with its invoices, newest first, and their refunds (`subscriptions.read`).
package struct GetSubscription: Query {
    package static let action: Action = "subscriptions.read"
    let id: UUID
    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> (SubscriptionRecord, [InvoiceRecord]) {
        let subscription = try await SubscriptionRecord.fetch(id, forUpdate: false, in: unit)
        var invoices = try await unit.all(
            """
            SELECT \(unescaped: InvoiceRecord.columns) FROM invoices WHERE subscription_id = \(id)
            ORDER BY period_start DESC, id DESC
            """, as: InvoiceRecord.self)
        let refunds = try await unit.all(
            """
            SELECT \(unescaped: InvoiceRefund.columns) FROM invoice_refunds
            WHERE invoice_id IN (SELECT id FROM invoices WHERE subscription_id = \(id))
            ORDER BY created_at, id
            """, as: InvoiceRefund.self)
        let byInvoice = Dictionary(grouping: refunds, by: \.invoiceID)
        for index in invoices.indices { invoices[index].refunds = byInvoice[invoices[index].id] ?? [] }
        return (subscription, invoices)
    }
}
