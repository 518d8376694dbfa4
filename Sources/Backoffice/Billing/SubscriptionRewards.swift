import BackofficePlatform
import Foundation

/// The FitPoints the earning rules' `events` pay for a subscription, in the change's transaction:
/// its start (a trial or a first paid period: once per subscription) and each paid renewal (once
/// per invoice; a trial's first paid period is its start's continuation, not a renewal).
enum SubscriptionRewards {
    static func started(_ subscription: SubscriptionRecord, action: Action, in unit: UnitOfWork) async throws
        -> [AuditRecord]
    {
        try await pay(.subscriptionStarted, occurrence: subscription.id.text, subscription, action: action, in: unit)
    }

    static func renewed(_ subscription: SubscriptionRecord, invoice: UUID, action: Action, in unit: UnitOfWork)
        async throws -> [AuditRecord]
    {
        try await pay(.subscriptionRenewal, occurrence: invoice.text, subscription, action: action, in: unit)
    }

    private static func pay(
        _ event: EarningRules.RewardEvent, occurrence: String, _ subscription: SubscriptionRecord, action: Action,
        in unit: UnitOfWork
    ) async throws -> [AuditRecord] {
        let customer = try await Customer.fetch(subscription.customerID, in: unit)
        return try await AccountRewards.pay(event, occurrence: occurrence, to: customer, action: action, in: unit)
            .map { [$0] } ?? []
    }
}
