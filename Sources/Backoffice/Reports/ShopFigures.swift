import Foundation
import BackofficePlatform

/// The orders placed on each day of a range by the state they are in now (UTC days), from the
/// daily rollups in one statement: a shop's own, or every shop's for a platform role.
package struct DailyOrderStates: Query {
    package static let action: Action = DailySales.action
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    /// The count of each (day, state) with any orders.
    package func read(in unit: UnitOfWork) async throws -> [UTCDay: [Order.Status: Int]] {
        let tenant = unit.tenantScope
        let rows = try await unit.all(
            """
            SELECT (day - DATE '1970-01-01')::integer, status, sum(orders)::bigint FROM shop_daily_orders
            WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant))
                AND day BETWEEN \(range.from.description)::date AND \(range.through.description)::date
            GROUP BY day, status HAVING sum(orders) <> 0
            """,
            { try $0.decode((Int32, String, Int64).self) })
        var counts: [UTCDay: [Order.Status: Int]] = [:]
        for (day, status, orders) in rows {
            counts[UTCDay(number: Int(day)), default: [:]][try Order.Status(known: status)] = Int(orders)
        }
        return counts
    }
}

/// One of a shop's best-selling goods over a range: units and revenue of orders paid and kept
/// (neither cancelled nor refunded), with its units on each day for a sparkline.
package struct BestSeller: Sendable, Equatable {
    package let goodID: UUID
    package let sku: String
    package let name: String
    package let units: Int64
    package let revenueCents: Int64
    package let revenueFitPoints: Int64
    /// Units on each day of the range, in order.
    package let daily: [Int64]
}

/// A shop's (or, for a platform role, every shop's) best-selling goods over a range, most units
/// first, in one statement over the daily rollups.
package struct BestSellers: Query {
    package static let action: Action = DailySales.action
    let range: ReportRange
    let limit: Int

    package init(range: ReportRange, limit: Int = 10) { (self.range, self.limit) = (range, limit) }

    package func read(in unit: UnitOfWork) async throws -> [BestSeller] {
        let tenant = unit.tenantScope
        let (from, through) = (range.from.description, range.through.description)
        return try await unit.all(
            """
            WITH top AS (
                SELECT tenant_id, good_id, sum(units) AS units, sum(revenue_cents) AS cents,
                    sum(revenue_fitpoints) AS points
                FROM shop_daily_goods WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant))
                    AND day BETWEEN \(from)::date AND \(through)::date
                GROUP BY tenant_id, good_id HAVING sum(units) > 0
                ORDER BY units DESC, cents DESC, good_id LIMIT \(limit))
            SELECT t.good_id, g.sku, g.name, t.units::bigint, t.cents::bigint, t.points::bigint,
                (SELECT array_agg(coalesce(d.units, 0)::bigint ORDER BY s.day)
                 FROM generate_series(\(from)::date, \(through)::date, interval '1 day') AS s (day)
                 LEFT JOIN shop_daily_goods d ON d.tenant_id = t.tenant_id AND d.day = s.day::date
                    AND d.good_id = t.good_id)
            FROM top t JOIN goods g ON g.tenant_id = t.tenant_id AND g.id = t.good_id
            ORDER BY t.units DESC, t.cents DESC, t.good_id
            """,
            {
                let (id, sku, name, units, cents, points, daily) = try $0.decode(
                    (UUID, String, String, Int64, Int64, Int64, [Int64]).self)
                return BestSeller(
                    goodID: id, sku: sku, name: name, units: units, revenueCents: cents, revenueFitPoints: points,
                    daily: daily)
            })
    }
}

/// Every shop's sales over a range side by side, for the platform (shops without sales too),
/// the largest gross first; one statement over the daily rollups.
package struct SalesByShop: Query {
    package static let action: Action = "reports.shops"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    package struct Row: Sendable, Equatable {
        package let tenantID: UUID
        package let name: String
        package let figures: SalesFigures
    }

    package func read(in unit: UnitOfWork) async throws -> [Row] {
        let (from, through) = (range.from.description, range.through.description)
        let rows = try await unit.all(
            """
            WITH sold AS (
                SELECT tenant_id, sum(orders) AS orders, sum(total_cents) AS cents, sum(total_fitpoints) AS points
                FROM shop_daily_orders
                WHERE day BETWEEN \(from)::date AND \(through)::date AND order_status_sold(status) GROUP BY tenant_id),
            refunded AS (
                SELECT tenant_id, sum(refunds) AS refunds, sum(refunded_cents) AS cents,
                    sum(refunded_fitpoints) AS points
                FROM shop_daily_refunds WHERE day BETWEEN \(from)::date AND \(through)::date GROUP BY tenant_id)
            SELECT t.id, t.name, coalesce(s.orders, 0)::bigint, coalesce(s.cents, 0)::bigint,
                coalesce(r.refunds, 0)::bigint, coalesce(r.cents, 0)::bigint, coalesce(s.points, 0)::bigint,
                coalesce(r.points, 0)::bigint
            FROM tenants t LEFT JOIN sold s ON s.tenant_id = t.id LEFT JOIN refunded r ON r.tenant_id = t.id
            WHERE t.id <> \(platformTenantID)
            ORDER BY 4 DESC, t.name, t.id
            """,
            { try $0.decode((UUID, String, Int64, Int64, Int64, Int64, Int64, Int64).self) })
        return rows.map { id, name, orders, gross, refunds, refunded, points, refundedPoints in
            var figures = SalesFigures(start: range.from, end: range.through)
            (figures.orders, figures.grossCents, figures.grossFitPoints) = (Int(orders), gross, points)
            (figures.refunds, figures.refundedCents, figures.refundedFitPoints) = (
                Int(refunds), refunded, refundedPoints
            )
            return Row(tenantID: id, name: name, figures: figures)
        }
    }
}
