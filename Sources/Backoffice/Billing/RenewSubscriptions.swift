import BackofficePlatform
import Foundation
import Logging
import ServiceLifecycle

/// What a renewal run did.
package struct RenewalReport: Sendable, Equatable {
    /// Renewals invoiced (a subscription moved into its next period).
    package var invoiced = 0
    /// Subscriptions ended at period end (canceled by their customer before, or their account deleted).
    package var ended = 0
    /// Charges attempted (renewals and retries).
    package var charged = 0
    package var paid = 0
    /// Declined, to be tried again on the dunning schedule.
    package var retrying = 0
    package var lapsed = 0
    /// Charges with no verdict (the provider unreachable, or pending): asked about at a later run.
    package var unknown = 0
}

/// Renews the subscriptions due (`subscriptions.renew`), exactly once per period: batches of
/// `OpenRenewals` (one transaction each: renewals invoiced, invoices claimed with SKIP LOCKED, so
/// runs in several processes share the work), each claimed invoice charged with no transaction
/// open (`concurrency` at a time), its verdict recorded by `RecordRenewalCharge` in a transaction of
/// its own. A charge with no verdict keeps its claim until the claim lapses; the run that takes it
/// over asks the provider about that attempt (by its reference) before charging, and charges under
/// the same idempotency key, so the provider never makes it twice. Stops early while the provider's
/// circuit is open.
package struct RenewSubscriptions: Sendable {
    package static let action: Action = "subscriptions.renew"
    let payments: any PaymentGateway
    let batchSize: Int
    let concurrency: Int

    package init(payments: any PaymentGateway, batchSize: Int = 200, concurrency: Int = 8) {
        (self.payments, self.batchSize, self.concurrency) = (payments, batchSize, concurrency)
    }

    /// Runs until nothing is due, for `context`'s principal (policy checked at each step), or as the
    /// system (`system`: the renewal service of `serve`).
    package func run(_ database: Database, context: OperationContext, system: Bool = false) async throws
        -> RenewalReport
    {
        @Sendable func step<Operation: AuditedOperation>(_ operation: Operation) async throws -> Operation.Output {
            try await database.run(operation, context: context, asSystem: system)
        }
        var report = RenewalReport()
        // Bounded: each batch notices, invoices, ends or claims something new, or the run stops.
        for _ in 0..<100_000 {
            guard try await step(NoticePriceChanges(limit: batchSize)) == batchSize else { break }
        }
        for _ in 0..<100_000 {
            let batch = try await step(
                OpenRenewals(limit: batchSize, lease: payments.claimLease, provider: payments.provider))
            report.invoiced += batch.opened
            report.ended += batch.ended
            try await settle(batch.claimed, report: &report) { try await step($0) }
            let full = batch.opened + batch.ended == batchSize || batch.claimed.count == batchSize
            if !full || !payments.isAcceptingCalls { break }
        }
        return report
    }

    /// Each claimed invoice charged and its verdict recorded, `concurrency` at a time.
    private func settle(
        _ claimed: [ClaimedInvoice], report: inout RenewalReport,
        step: @escaping @Sendable (RecordRenewalCharge) async throws -> RenewalVerdict
    ) async throws {
        var pending = claimed[...]
        try await withThrowingTaskGroup(of: RenewalVerdict?.self) { group in
            func next() {
                guard let invoice = pending.popFirst() else { return }
                group.addTask { try await charge(invoice, step: step) }
            }
            for _ in 0..<concurrency { next() }
            while let verdict = try await group.next() {
                report.charged += 1
                switch verdict {
                case .paid: report.paid += 1
                case .retrying: report.retrying += 1
                case .lapsed: report.lapsed += 1
                case .unchanged, nil: report.unknown += 1
                }
                next()
            }
        }
    }

    /// The invoice's attempt at the provider (asked about first when an earlier run started it),
    /// its verdict recorded; nil when the provider gave none.
    private func charge(
        _ invoice: ClaimedInvoice, step: @Sendable (RecordRenewalCharge) async throws -> RenewalVerdict
    ) async throws -> RenewalVerdict? {
        let verdict: PaymentOutcome
        do { verdict = try await invoice.attempt(with: payments) } catch is PaymentRefusal { return nil }
        return try await step(RecordRenewalCharge(invoice: invoice, verdict: verdict))
    }
}

/// Runs the renewals every `interval` inside `serve`, as the system (each change audited). Several
/// `serve` processes may each run it: their runs share the work (SKIP LOCKED) and never charge a
/// period twice. Stops on graceful shutdown.
package struct RenewalService: Service {
    let database: Database
    let policies: PolicySet
    let renewals: RenewSubscriptions
    let interval: Duration
    /// What the waits between runs sleep on (`ManualTimers` in tests).
    let timers: any Timers

    package init(
        database: Database, policies: PolicySet, payments: any PaymentGateway, interval: Duration,
        timers: any Timers = EventLoopTimers()
    ) {
        (self.database, self.policies, self.interval, self.timers) = (database, policies, interval, timers)
        renewals = RenewSubscriptions(payments: payments)
    }

    /// Waits one interval before the first run, so the connection pool (a sibling service) runs first.
    package func run() async throws {
        await repeatEvery(interval, on: timers, logger: database.logger, failure: "renewing subscriptions failed") {
            let report = try await renewals.run(
                database, context: OperationContext.system("renewals", policies: policies), system: true)
            guard report != RenewalReport() else { return }
            database.logger.info(
                "subscriptions renewed",
                metadata: [
                    "invoiced": "\(report.invoiced)", "ended": "\(report.ended)", "paid": "\(report.paid)",
                    "retrying": "\(report.retrying)", "lapsed": "\(report.lapsed)", "unknown": "\(report.unknown)",
                ])
        }
    }
}

/// What a renewal run would do now (`subscriptions.renew` with `dry_run`), changing nothing: the
/// renewals due (`invoiced`), the subscriptions due to end (`ended`), and the charges due
/// (`charged`: the invoices due a charge or a retry, and the renewals about to be invoiced).
package struct DueRenewals: Query {
    package static let action: Action = "subscriptions.renew"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> RenewalReport {
        let counts = try await unit.first(
            """
            SELECT
                (SELECT count(*) FROM subscriptions WHERE status IN ('active', 'trialing')
                    AND current_period_end <= \(unit.now) AND NOT cancel_at_period_end),
                (SELECT count(*) FROM subscriptions WHERE status IN ('active', 'trialing')
                    AND current_period_end <= \(unit.now) AND cancel_at_period_end),
                (SELECT count(*) FROM invoices WHERE status = 'open' AND next_attempt_at <= \(unit.now)
                    AND (claimed_until IS NULL OR claimed_until <= \(unit.now)))
            """
        ) { try $0.decode((Int64, Int64, Int64).self) }
        let (renewals, ends, charges) = counts ?? (0, 0, 0)
        return RenewalReport(invoiced: Int(renewals), ended: Int(ends), charged: Int(renewals + charges))
    }
}
