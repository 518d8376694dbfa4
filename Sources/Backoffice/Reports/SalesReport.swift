import Foundation
import BackofficePlatform

/// A shop's sales over some days (UTC): what the orders placed brought in, what refunds gave
/// back, and FitPoints redeemed. Definitions (docs/console.md): gross is the total of orders
/// placed that were paid (even if refunded later); refunds count on the day of the refund; net is
/// gross − refunds, negative on a day that refunded more than it sold. Money in exact cents.
package struct SalesFigures: Sendable, Equatable {
    /// The first and last day these figures cover.
    package var start: UTCDay
    package var end: UTCDay
    /// Orders placed and paid (`gross`'s orders).
    package var orders = 0
    package var grossCents: Int64 = 0
    package var refunds = 0
    package var refundedCents: Int64 = 0
    /// FitPoints spent on the orders placed and paid, and given back by refunds.
    package var grossFitPoints: Int64 = 0
    package var refundedFitPoints: Int64 = 0

    package init(start: UTCDay, end: UTCDay) { (self.start, self.end) = (start, end) }

    package var netCents: Int64 { grossCents - refundedCents }
    package var netFitPoints: Int64 { grossFitPoints - refundedFitPoints }

    /// These figures and `other`'s, over both stretches.
    func adding(_ other: SalesFigures) -> SalesFigures {
        var sum = self
        sum.start = min(start, other.start)
        sum.end = max(end, other.end)
        sum.orders += other.orders
        sum.grossCents += other.grossCents
        sum.refunds += other.refunds
        sum.refundedCents += other.refundedCents
        sum.grossFitPoints += other.grossFitPoints
        sum.refundedFitPoints += other.refundedFitPoints
        return sum
    }
}

extension [SalesFigures] {
    /// Daily figures summed into `granularity`'s groups, each cut to the days given.
    package func grouped(by granularity: ReportGranularity) -> [SalesFigures] {
        var groups: [SalesFigures] = []
        for day in self {
            if let last = groups.last, granularity.start(of: last.start) == granularity.start(of: day.start) {
                groups[groups.count - 1] = last.adding(day)
            } else {
                groups.append(day)
            }
        }
        return groups
    }

    /// Every day's figures summed (nil for no days).
    package var total: SalesFigures? { first.map { first in dropFirst().reduce(first) { $0.adding($1) } } }
}

/// The sales of the caller's shop (or, for a platform role, of every shop) on each day of a
/// range, from the daily rollups in one statement; a day without sales is there with zeros.
package struct DailySales: Query {
    package static let action: Action = "reports.sales"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    package func read(in unit: UnitOfWork) async throws -> [SalesFigures] {
        let tenant = unit.tenantScope
        let (from, through) = (range.from.description, range.through.description)
        let rows = try await unit.all(
            """
            WITH sold AS (
                SELECT day, sum(orders) AS orders, sum(total_cents) AS cents, sum(total_fitpoints) AS points
                FROM shop_daily_orders WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant))
                    AND day BETWEEN \(from)::date AND \(through)::date AND order_status_sold(status) GROUP BY day),
            refunded AS (
                SELECT day, sum(refunds) AS refunds, sum(refunded_cents) AS cents, sum(refunded_fitpoints) AS points
                FROM shop_daily_refunds WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant))
                    AND day BETWEEN \(from)::date AND \(through)::date GROUP BY day)
            SELECT (day - DATE '1970-01-01')::integer, coalesce(s.orders, 0)::bigint, coalesce(s.cents, 0)::bigint,
                coalesce(s.points, 0)::bigint, coalesce(r.refunds, 0)::bigint, coalesce(r.cents, 0)::bigint,
                coalesce(r.points, 0)::bigint
            FROM sold s FULL JOIN refunded r USING (day) ORDER BY day
            """,
            { try $0.decode((Int32, Int64, Int64, Int64, Int64, Int64, Int64).self) })
        var byDay = [UTCDay: SalesFigures]()
        for (day, orders, gross, grossPoints, refunds, refunded, refundedPoints) in rows {
            var figures = SalesFigures(start: UTCDay(number: Int(day)), end: UTCDay(number: Int(day)))
            (figures.orders, figures.grossCents, figures.grossFitPoints) = (Int(orders), gross, grossPoints)
            (figures.refunds, figures.refundedCents, figures.refundedFitPoints) = (
                Int(refunds), refunded, refundedPoints
            )
            byDay[figures.start] = figures
        }
        return range.allDays.map { byDay[$0] ?? SalesFigures(start: $0, end: $0) }
    }
}
