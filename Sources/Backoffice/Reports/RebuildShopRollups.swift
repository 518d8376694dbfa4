import Foundation
import BackofficePlatform

/// Recomputes the shops' daily figures (`shop_daily_orders`, `shop_daily_refunds`,
/// `shop_daily_goods`) from their orders — every shop's, or one — and, for every shop, the audit
/// log's daily counts (`audit_daily_actions`) from its events and the manager's (customers by
/// status, FitPoints flows) from the accounts, locks and ledger; says, per table, how many rows the
/// kept figures had wrong (0 when the triggers that keep them kept them right). Audited with those
/// counts, in the rebuild's transaction.
package struct RebuildShopRollups: AuditedOperation {
    package static let action: Action = "reports.rebuild"
    let tenantID: UUID?

    package init(tenantID: UUID?) { self.tenantID = tenantID }

    /// The rows found different, by table (`orders`, `refunds`, `goods`).
    package struct Outcome: Sendable, Equatable, Encodable {
        package let differed: [String: Int]
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Outcome> {
        if let tenantID,
            try await unit.first("SELECT id FROM tenants WHERE id = \(tenantID)", { try $0.decode(UUID.self) }) == nil
        {
            throw DomainError.notFound("tenant")
        }
        // One rebuild at a time: two would each replace the other's rows.
        try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('shop_rollups_rebuild'))")
        // The head of the chain this rebuild's own event goes to, before the rollups' locks: a writer
        // takes its chain's head first and the rollups at commit, so the same order cannot deadlock.
        let target = tenantID?.text ?? "all"
        try await unit.execute("SELECT audit_chain_hold(\(tenantID ?? platformTenantID), \(target))")
        let rows = try await unit.all(
            "SELECT rollup, differed FROM shop_rollups_rebuild(\(tenantID))", { try $0.decode((String, Int64).self) })
        var differed = Dictionary(uniqueKeysWithValues: rows.map { ($0, Int($1)) })
        if tenantID == nil {
            differed["audit"] = Int(
                try await unit.first("SELECT audit_daily_actions_rebuild()", { try $0.decode(Int64.self) }) ?? 0)
            if unit.principal.tenantID == platformTenantID {
                for (rollup, count) in try await unit.all(
                    "SELECT rollup, differed FROM manager_rollups_rebuild()", { try $0.decode((String, Int64).self) })
                {
                    differed[rollup] = Int(count)
                }
            }
        }
        let outcome = Outcome(differed: differed)
        let event = AuditRecord(
            action: Self.action, tenantID: tenantID ?? platformTenantID, targetType: "shop_rollups",
            targetID: target, reason: nil, before: nil,
            after: try AuditRecord.json(outcome))
        return Audited(outcome, event: event)
    }
}
