import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

extension SubscriptionRecord.Status {
    /// Not ended: at most one per customer (incomplete, trialing, active, past due).
    var isLive: Bool { self != .canceled && self != .lapsed }
}

/// The billing section's tabs and the forms' values.
enum BillingBoard {
    /// Past due first: what a manager looks at; nil is every status.
    static let tabs: [SubscriptionRecord.Status?] = [.pastDue, .active, .trialing, .canceled, .lapsed, nil]

    static func label(_ status: SubscriptionRecord.Status) -> String {
        switch status {
        case .pastDue: "Past due"
        default: status.rawValue.prefix(1).uppercased() + status.rawValue.dropFirst()
        }
    }

    /// The `status` filter: past due when absent, every status for `any`.
    static func status(_ text: String?) throws -> SubscriptionRecord.Status? {
        guard let text else { return .pastDue }
        if text == "any" { return nil }
        guard let status = SubscriptionRecord.Status(rawValue: text) else {
            throw DomainError.invalid([
                FieldIssue(
                    field: "status", code: "unknown_status",
                    message: "must be one of "
                        + SubscriptionRecord.Status.allCases.map(\.rawValue).joined(separator: ", "))
            ])
        }
        return status
    }

    /// An amount in dollars (`4`, `4.5`, `$4.50`: `Money.cents`) as cents; nil when empty (the whole rest).
    static func cents(_ text: String?) throws -> Int64? { try text.map { try Money.cents($0, field: "amount") } }

    /// The provider declined a refund: nothing changed (402 in the API), said next to the form.
    static func declined(_ code: String?) -> DomainError {
        .invalid([
            FieldIssue(
                field: "confirm", code: "refund_declined",
                message: "The payment provider declined the refund (\(code ?? "declined")); nothing changed.")
        ])
    }
}

/// The emails of the customers a page lists, by id (masked for a role that sees PII masked), in one
/// statement.
struct CustomerEmails: Query {
    static let action = ListSubscriptions.action
    let ids: [UUID]

    func read(in unit: UnitOfWork) async throws -> [UUID: String] {
        guard !ids.isEmpty else { return [:] }
        let masks = unit.context.masksPII
        var emails: [UUID: String] = [:]
        for try await (id, email) in try await unit.connection.send(
            "SELECT id, email FROM customers WHERE id = ANY(\(Array(Set(ids))))", logger: unit.logger
        ).decode((UUID, String).self) {
            emails[id] = masks ? PIIMask.email(email) : email
        }
        return emails
    }
}

/// A subscription as the console shows it (its customer by email, when the page read them).
struct SubscriptionView {
    let id: String, customer: String, plan: String, status: String, price: String, interval: String
    var email: String?
    let periodStart: ShownTime?, periodEnd: ShownTime?, graceEnds: ShownTime?, trialEnds: ShownTime?
    let canceling: Bool, credit: String?, updated: ShownTime

    init(_ record: SubscriptionRecord) {
        (id, customer, plan, status) = (record.id.text, record.customerID.text, record.plan, record.status.rawValue)
        (price, interval) = (Money.dollars(record.priceCents), record.interval.rawValue)
        periodStart = record.currentPeriod.map { ConsoleTime.text($0.lowerBound) }
        periodEnd = record.currentPeriod.map { ConsoleTime.text($0.upperBound) }
        graceEnds = record.graceEndsAt.map(ConsoleTime.text)
        trialEnds = record.status == .trialing ? record.trialEndsAt.map(ConsoleTime.text) : nil
        canceling = record.cancelAtPeriodEnd
        credit = record.creditCents > 0 ? Money.dollars(record.creditCents) : nil
        updated = ConsoleTime.text(record.updatedAt)
    }
}

/// An invoice as the console shows it, with its refunds and any dispute.
struct InvoiceView {
    let id: String, shortID: String, periodStart: ShownTime, periodEnd: ShownTime, amount: String, status: String
    let attempts: Int, failure: String?, nextAttempt: ShownTime?, refunded: String?, paid: ShownTime?
    let dispute: String?, refunds: [[String: Any]]

    init(_ invoice: InvoiceRecord) {
        (id, shortID, status, attempts) = (
            invoice.id.text, String(invoice.id.text.prefix(8)), invoice.status, invoice.attempts
        )
        (periodStart, periodEnd) = (ConsoleTime.text(invoice.periodStart), ConsoleTime.text(invoice.periodEnd))
        amount = Money.dollars(invoice.amountCents)
        failure = invoice.failureCode
        nextAttempt = invoice.status == "open" ? invoice.nextAttemptAt.map(ConsoleTime.text) : nil
        refunded = invoice.refundedCents > 0 ? Money.dollars(invoice.refundedCents) : nil
        paid = invoice.paidAt.map(ConsoleTime.text)
        dispute = invoice.dispute.map {
            "\($0.status.replacingOccurrences(of: "_", with: " ")), \(Money.dollars($0.cents))"
                + ($0.reason.map { " (\($0))" } ?? "")
        }
        refunds = invoice.refunds.map {
            [
                "amount": Money.dollars($0.amountCents), "status": $0.status.rawValue, "reason": $0.reason,
                "at": ConsoleTime.text($0.createdAt),
            ]
        }
        let left = invoice.amountCents - invoice.refundedCents
        refundLabel =
            "\(shortID): \(ConsoleTime.text(invoice.periodStart).utcText.prefix(10)), "
            + "\(Money.dollars(left)) refundable"
    }

    /// How the refund form names it: its id, period and what is left to refund.
    let refundLabel: String
}

/// A renewal charge declined lately, with its customer and what comes next.
struct DeclinedRenewal: Sendable, RowDecodable {
    let invoiceID: UUID, customerID: UUID, amountCents: Int64, status: String, attempts: Int, failureCode: String
    let nextAttemptAt: Date?, at: Date

    static let columns = "id, customer_id, amount_cents, status, attempts, failure_code, next_attempt_at, updated_at"

    init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, Int64, String, Int32, String, Date?, Date).self)
        (invoiceID, customerID, amountCents, status, attempts) = (c.0, c.1, c.2, c.3, Int(c.4))
        (failureCode, nextAttemptAt, at) = (c.5, c.6, c.7)
    }
}

/// The renewal invoices whose last charge was declined (open and retried, or failed for good),
/// the latest first, at most `limit`.
struct DeclinedRenewals: Query {
    static let action = ListSubscriptions.action
    let limit: Int

    func read(in unit: UnitOfWork) async throws -> [DeclinedRenewal] {
        try await unit.all(
            """
            SELECT \(unescaped: DeclinedRenewal.columns) FROM invoices
            WHERE failure_code IS NOT NULL AND status IN ('open', 'failed') AND NOT charging
            ORDER BY updated_at DESC, id DESC LIMIT \(limit)
            """, as: DeclinedRenewal.self)
    }
}

/// A declined renewal as the billing section lists it.
struct DeclinedRenewalView {
    let invoice: String, customer: String, amount: String, status: String, attempts: Int, failure: String
    var email: String?
    let nextAttempt: ShownTime?, at: ShownTime

    init(_ row: DeclinedRenewal) {
        (invoice, customer, status) = (String(row.invoiceID.text.prefix(8)), row.customerID.text, row.status)
        (amount, attempts, failure) = (Money.dollars(row.amountCents), row.attempts, row.failureCode)
        nextAttempt = row.status == "open" ? row.nextAttemptAt.map(ConsoleTime.text) : nil
        at = ConsoleTime.text(row.at)
    }
}
