import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

/// The system lifts timed locks whose `until` has passed; each lifting is an audit event by the
/// system actor. Returns the accounts unlocked.
package struct LiftExpiredLocks: AuditedOperation {
    package static let action: Action = "accounts.unlock"
    package let limit: Int

    package init(limit: Int = 100) { self.limit = limit }

    package func perform(in unit: UnitOfWork) async throws -> Audited<[Customer]> {
        let ids = try await unit.all(
            """
            SELECT l.customer_id FROM account_locks l JOIN customers c ON c.id = l.customer_id
            WHERE l.lifted_at IS NULL AND l.until <= \(unit.now) AND c.status = 'locked'
            ORDER BY l.until LIMIT \(limit) FOR UPDATE OF l, c SKIP LOCKED
            """
        ) { try $0.decode(UUID.self) }
        var unlocked: [Customer] = []
        var events: [AuditRecord] = []
        for id in ids {
            let before = try await Customer.fetch(id, forUpdate: true, in: unit)
            let after = try await before.write(
                status: .active, failedLogins: 0, lock: .lift(by: nil, reason: "lock_expired"), in: unit)
            unlocked.append(after)
            events.append(try accountEvent("accounts.unlock", before, after, reason: "lock_expired").bySystem)
        }
        guard let first = events.first else { return .unchanged([]) }
        return Audited(unlocked, event: first, more: Array(events.dropFirst()))
    }
}

/// What `maintenance purge` removed (or, in a dry run, would remove).
package struct PurgeReport: Sendable, Equatable {
    package var accounts: [UUID]
    package var idempotencyKeys: Int
    package var loginAttempts: Int
    /// Console sign-in attempts older than the failure window (they no longer count).
    package var signInAttempts: Int = 0
    /// Goods files staged for an import and expired unapplied.
    package var stagedImports: Int = 0
    /// OAuth client assertions' `jti`s past their assertion's expiry (they can no longer be replayed).
    package var clientAssertions: Int = 0
    /// OAuth access tokens expired more than an hour ago (their JWT's `exp` refuses them first).
    package var accessTokens: Int = 0
}

/// Applies `policies/retention.yaml` (`accounts.purge`): purges accounts soft-deleted longer ago
/// than allowed (one audit event each; one whose subscription still runs waits until it ends),
/// expired Idempotency-Key records, old login attempts and console sign-in attempts older than the
/// failure window, goods files staged for an import
/// that expired unapplied, OAuth client assertions' `jti`s past their expiry and OAuth access
/// tokens expired over an hour ago (one audit event per kind, with the count). With `dryRun`, only
/// counts.
package struct PurgeExpiredData: AuditedOperation {
    package static let action: Action = "accounts.purge"
    let dryRun: Bool

    package init(dryRun: Bool) { self.dryRun = dryRun }

    package func perform(in unit: UnitOfWork) async throws -> Audited<PurgeReport> {
        let retention = unit.policies.retention
        let days = retention.deletedAccountsPurgeAfterDays
        let cutoff = unit.now.addingTimeInterval(-Double(days) * 86_400)
        let due = try await unit.all(
            """
            SELECT \(unescaped: Customer.columns) FROM \(unescaped: Customer.from)
            WHERE c.status = 'deleted' AND c.deleted_at < \(cutoff)
              AND NOT EXISTS (
                SELECT FROM subscriptions s WHERE s.customer_id = c.id AND \(unescaped: AccountErasure.live))
            ORDER BY c.deleted_at FOR UPDATE OF c
            """, as: Customer.self)
        let keys = try await expired(
            "idempotency_keys", "created_at", minutes: retention.idempotencyKeepHours * 60, in: unit)
        let attempts = try await expired(
            "login_attempts", "occurred_at", minutes: retention.loginAttemptsKeepDays * 24 * 60, in: unit)
        let window = unit.policies.console.failureWindowMinutes
        let signIns = try await expired("console_sign_in_failures", "at", minutes: window, in: unit)
        let staged = try await expired("staged_goods_imports", "expires_at", minutes: 0, in: unit)
        let assertions = try await expired("oauth_client_assertions", "expires_at", minutes: 0, in: unit)
        let tokens = try await expired("tokens", "expires_at", minutes: 60, only: "client_id IS NOT NULL", in: unit)
        let report = PurgeReport(
            accounts: due.map(\.id), idempotencyKeys: keys, loginAttempts: attempts, signInAttempts: signIns,
            stagedImports: staged, clientAssertions: assertions, accessTokens: tokens)
        if !dryRun && !due.isEmpty { try await AccountErasure.erase(report.accounts, deletedBefore: cutoff, in: unit) }
        guard !dryRun else { return .unchanged(report) }
        let erasure = try AccountErasure.auditedAfter
        var events = try due.map { customer in
            AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "customer",
                targetID: customer.id.uuidString.lowercased(),
                reason: "deleted more than \(days) days ago", before: try customer.snapshot, after: erasure)
        }
        struct Purged: Encodable { let deleted: Int }
        for (kind, count, reason) in [
            ("idempotency_keys", keys, "older than \(retention.idempotencyKeepHours) hours"),
            ("login_attempts", attempts, "older than \(retention.loginAttemptsKeepDays) days"),
            ("console_sign_in_failures", signIns, "older than the \(window)-minute failure window"),
            ("staged_goods_imports", staged, "expired unapplied"),
            ("oauth_client_assertions", assertions, "past their assertion's expiry"),
            ("oauth_access_tokens", tokens, "expired more than an hour ago"),
        ] where count > 0 {
            events.append(
                AuditRecord(
                    action: Self.action, tenantID: platformTenantID, targetType: "retention", targetID: kind,
                    reason: reason, before: nil,
                    after: try AuditRecord.json(Purged(deleted: count))))
        }
        guard let first = events.first else { return .unchanged(report) }
        return Audited(report, event: first, more: Array(events.dropFirst()))
    }

    /// Counts (dry run) or deletes the rows of `table` whose `column` is more than `minutes` old
    /// (of those `only` names, a fixed condition of this file).
    private func expired(
        _ table: String, _ column: String, minutes: Int, only: String = "true", in unit: UnitOfWork
    ) async throws -> Int {
        let query: PostgresQuery =
            dryRun
            ? """
            SELECT count(*) FROM \(unescaped: table) WHERE \(unescaped: only) AND \(unescaped: column) <= \
            \(unit.now)::timestamptz - make_interval(mins => \(minutes)::int)
            """
            : """
            WITH gone AS (DELETE FROM \(unescaped: table) WHERE \(unescaped: only) AND \(unescaped: column) <=
                \(unit.now)::timestamptz - make_interval(mins => \(minutes)::int) RETURNING 1)
            SELECT count(*) FROM gone
            """
        return try await unit.first(query) { try $0.decode(Int.self) } ?? 0
    }
}

/// How a soft-deleted customer is erased, by `maintenance purge` after the retention period and by
/// `EraseDeletedAccount` before it.
enum AccountErasure {
    /// What an erasure erases of a customer, and what it keeps, from `CustomerDataRegistry` (the
    /// ledger's amounts and the audit log stay too: they hold no customer column).
    static var erased: [String] { CustomerDataRegistry.erased }
    static var kept: [String] {
        CustomerDataRegistry.kept + ["fitpoints ledger (amounts, by wallet id)", "audit_events"]
    }

    /// A subscription still running (it would renew): its customer is not erased until it ends.
    static let live = SubscriptionRecord.live

    /// Refuses the erasure of a customer with a live subscription (409 `subscription_live`).
    static func requireNoLiveSubscription(_ customerID: UUID, in unit: UnitOfWork) async throws {
        let live =
            try await unit.first(
                "SELECT count(*) FROM subscriptions s WHERE s.customer_id = \(customerID) AND \(unescaped: live)",
                { try $0.decode(Int.self) }) ?? 0
        guard live == 0 else {
            throw DomainError.conflict(
                code: "subscription_live", detail: "The account's subscription is still running: cancel it first.")
        }
    }

    /// The erasure's audit event's `after`: what was erased and what was kept.
    static var auditedAfter: String {
        get throws {
            struct Erased: Encodable { let erased: [String], kept: [String] }
            return try AuditRecord.json(Erased(erased: erased, kept: kept))
        }
    }

    /// Erases the customers (those of them deleted before `cutoff`) as `CustomerDataRegistry`
    /// declares: their rows and what hangs on them go (locks, login attempts, appeals, the health
    /// profile and its history, by cascade; their reports of others' content); their orders keep what
    /// tax law needs (amounts, dates, lines) with the shipping name and address erased; their
    /// moderation cases keep the decisions and statements of reasons with the author and the text erased.
    static func erase(_ customers: [UUID], deletedBefore cutoff: Date, in unit: UnitOfWork) async throws {
        try await unit.execute("SELECT erase_deleted_customers_shipping(\(customers), \(cutoff))")
        try await unit.execute("SELECT erase_deleted_customers_moderation(\(customers), \(cutoff))")
        try await unit.execute("DELETE FROM customers WHERE id = ANY(\(customers)) AND status = 'deleted'")
    }
}
