import BackofficeConsole
import BackofficePlatform
import Foundation

extension QueuedMail.Kind {
    /// The plan's price changes for this subscription from a renewal at least the notice's days away.
    static let subscriptionPriceChange: Self = "subscription_price_change"
}

/// The notice of a plan's new price (`subscriptions.renew`, a step of each renewal run): live
/// subscriptions of a plan whose price in `policies/billing/plans.yaml` differs from theirs, at most
/// `limit`, locked with SKIP LOCKED, are told by mail; the new price is noted with the day it may
/// apply from (now plus the policy's notice days), and the first renewal starting then or later
/// bills it (`OpenRenewals`). A subscription already told of that price is not told again. Each
/// notice is an audit event with its mail.
struct NoticePriceChanges: AuditedOperation {
    static let action: Action = "subscriptions.renew"
    let limit: Int

    /// How many subscriptions were told.
    func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        let billing = unit.policies.billing
        let from = unit.now.addingTimeInterval(Double(billing.priceChangeNoticeDays) * 86_400)
        var events: [AuditRecord] = []
        var told = 0
        for plan in billing.plans where told < limit {
            let noticed = try await unit.all(
                """
                UPDATE subscriptions SET next_price_cents = \(plan.priceCents), next_price_from = \(from),
                    updated_at = \(unit.now), version = version + 1
                WHERE id IN (
                    SELECT id FROM subscriptions
                    WHERE plan = \(plan.id) AND status IN ('trialing', 'active', 'past_due')
                        AND price_cents <> \(plan.priceCents) AND next_price_cents IS DISTINCT FROM \(plan.priceCents)
                    ORDER BY id LIMIT \(limit - told) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: SubscriptionRecord.columns)
                """, as: SubscriptionRecord.self)
            told += noticed.count
            for subscription in noticed {
                events.append(
                    AuditRecord(
                        action: Self.action, tenantID: platformTenantID, targetType: "subscription",
                        targetID: subscription.id.text,
                        reason: "price \(plan.priceCents) cents noticed, from the first renewal on or after "
                            + UTCDay(from).description,
                        before: nil, after: try subscription.snapshot))
                events += try await BillingMail.queue(
                    .subscriptionPriceChange, to: subscription.customerID, reference: subscription.id,
                    fields: [
                        "plan": plan.name, "old_price": Money.dollars(subscription.priceCents),
                        "new_price": Money.dollars(plan.priceCents), "from": UTCDay(from).description,
                        "invoice_id": subscription.id.text,
                    ], in: unit)
            }
        }
        guard let first = events.first else { return .unchanged(0) }
        return Audited(told, event: first, more: Array(events.dropFirst()))
    }
}
