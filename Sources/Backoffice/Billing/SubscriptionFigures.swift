import BackofficePlatform
import Foundation

/// The subscription business on each day of a range (UTC), from the daily changes the database
/// keeps (`subscription_daily_figures`), in one statement: paying subscribers and monthly recurring
/// revenue at each day's end (the changes before the range and up to the day, added up here), and
/// each day's starts, churn, declined renewals and revenue recovered by a retry.
package struct SubscriptionFiguresOverTime: Query {
    package static let action: Action = "subscriptions.list"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    /// A day's starts, churn, declined renewals and recovered revenue, and the paying subscribers and
    /// MRR at its end.
    package struct Day: Sendable, Equatable {
        package let started: Int, churned: Int, failedRenewals: Int, recoveredCents: Int64
        package let paying: Int, mrrCents: Int64
    }

    package func read(in unit: UnitOfWork) async throws -> [Day] {
        let rows = try await unit.all(
            """
            SELECT CASE WHEN day < \(range.from.description)::date THEN -1 ELSE (day - DATE '1970-01-01') END::integer,
                sum(started)::bigint, sum(churned)::bigint, sum(paying_change)::bigint, sum(mrr_change_cents)::bigint,
                sum(failed_renewals)::bigint, sum(recovered_cents)::bigint
            FROM subscription_daily_figures WHERE day <= \(range.through.description)::date GROUP BY 1
            """,
            { try $0.decode((Int32, Int64, Int64, Int64, Int64, Int64, Int64).self) })
        // one row a day (grouped by it); running: paying subscribers and MRR
        let changes = DailyChanges(rows.map { (day: $0.0, row: $0) })
        return changes.days(of: range) { before in
            (paying: before.reduce(0) { $0 + Int($1.3) }, mrr: before.reduce(Int64(0)) { $0 + $1.4 })
        } _: { running, today in
            let row = today.first ?? (0, 0, 0, 0, 0, 0, 0)
            running = (running.paying + Int(row.3), running.mrr + row.4)
            return Day(
                started: Int(row.1), churned: Int(row.2), failedRenewals: Int(row.5), recoveredCents: row.6,
                paying: running.paying, mrrCents: running.mrr)
        }
    }
}
