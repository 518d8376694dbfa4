import BackofficeAPI
import BackofficePlatform
import Foundation

/// Points for what happens to a customer's account (the `events` rules): a subscription that
/// starts, a subscription that renews (`SubscriptionRewards`). Each occurrence is paid once (its
/// source id is unique in the ledger); a locked or deleted account earns nothing.
enum AccountRewards {
    /// Pays the rule for `event` to `customer`, when the rules in force have one; the audit
    /// record of the payment (under the `action` that caused it), nil when nothing was paid.
    static func pay(
        _ event: EarningRules.RewardEvent, occurrence: String, to customer: Customer, action: Action,
        in unit: UnitOfWork
    ) async throws -> AuditRecord? {
        guard customer.status == .active, let ruleSet = try await EarningRuleSet.current(in: unit),
            let rule = ruleSet.rules.events.first(where: { $0.event == event })
        else { return nil }
        let source = "\(event.rawValue):\(occurrence)"
        let alreadyPaid =
            try await unit.first(
                "SELECT 1 FROM fitpoints_transfers WHERE kind = 'earning' AND source_event_id = \(source)",
                { _ in true }) ?? false
        guard !alreadyPaid else { return nil }
        let before = try await WalletBalance.fetch(customer.id, in: unit)
        try await Ledger.post(
            [
                Ledger.Transfer(
                    .earning, from: Ledger.issuance, to: Ledger.wallet(customer.id), amount: rule.points,
                    ruleID: rule.ruleID,
                    ruleVersion: ruleSet.version, sourceEventID: source)
            ], movement: unit.newID(), in: unit)
        let after = try await WalletBalance.fetch(customer.id, in: unit)
        return AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "fitpoints_wallet", targetID: customer.id.text,
            reason: "\(rule.ruleID): \(rule.points) points", before: try before.snapshot, after: try after.snapshot)
    }
}
