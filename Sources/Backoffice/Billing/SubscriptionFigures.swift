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

    package struct Day: Sendable, Equatable {
        package var started: Int = 0
        package var churned: Int = 0
        package var failedRenewals: Int = 0
        package var recoveredCents: Int64 = 0
        /// At the day's end.
        package var paying: Int = 0
        package var mrrCents: Int64 = 0
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
        var (paying, mrr): (Int, Int64) = (0, 0)
        var byDay: [UTCDay: Day] = [:]
        for (day, started, churned, payingChange, mrrChange, failed, recovered) in rows {
            guard day >= 0 else {
                (paying, mrr) = (Int(payingChange), mrrChange)
                continue
            }
            byDay[UTCDay(number: Int(day))] = Day(
                started: Int(started), churned: Int(churned), failedRenewals: Int(failed), recoveredCents: recovered,
                paying: Int(payingChange), mrrCents: mrrChange)
        }
        return range.allDays.map { day in
            var figures = byDay[day] ?? Day()
            paying += figures.paying
            mrr += figures.mrrCents
            (figures.paying, figures.mrrCents) = (paying, mrr)
            return figures
        }
    }
}
