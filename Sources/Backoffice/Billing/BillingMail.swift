import BackofficeConsole
import BackofficePlatform
import Foundation

extension QueuedMail.Kind {
    /// A subscription's invoice was paid: the receipt.
    static let subscriptionReceipt: Self = "subscription_receipt"
    /// A renewal's charge was declined: when it is tried again, and until when access is kept.
    static let subscriptionPaymentFailed: Self = "subscription_payment_failed"
    /// The last retry was declined: the subscription has lapsed.
    static let subscriptionLapsed: Self = "subscription_lapsed"
}

/// The customer's mails about their subscription, queued in the change's transaction (so a mail
/// goes out exactly when its change commits) to the account's address; a deleted account gets none.
/// The fields are what the mail shows: amounts in dollars, days in UTC, never the payment method.
enum BillingMail {
    static func queue(
        _ kind: QueuedMail.Kind, to customerID: UUID, reference: UUID, fields: [String: String], in unit: UnitOfWork
    ) async throws -> [AuditRecord] {
        guard
            let email = try await unit.first(
                "SELECT email FROM customers WHERE id = \(customerID) AND status <> 'deleted'",
                { try $0.decode(String.self) })
        else { return [] }
        let mail = QueuedMail(
            kind: kind, tenantID: platformTenantID, recipient: email, reference: reference, fields: fields)
        return [try await Outbox.queue(mail, in: unit)]
    }

    /// The fields every billing mail shows about the invoice and its subscription.
    static func fields(_ subscription: SubscriptionRecord, invoice: UUID, amountCents: Int64) -> [String: String] {
        var fields = ["plan": subscription.plan, "amount": Money.dollars(amountCents), "invoice_id": invoice.text]
        if let period = subscription.currentPeriod {
            fields["period_start"] = UTCDay(period.lowerBound).description
            fields["period_end"] = UTCDay(period.upperBound).description
        }
        return fields
    }
}
