import BackofficeConsole
import BackofficePlatform
import Foundation

/// An auditor's home for a period: the events appended each day by action family (the largest
/// families named, the rest together), the last verification's result and the age of the newest
/// checkpoint a verification compared with. Each day links to that day's events.
struct AuditorHome {
    let period: HomePeriod
    let actions: [UTCDay: [String: Int]]
    let latest: AuditVerification?
    let checkpointTakenAt: Date?

    /// How many families the chart names; the others are "Other".
    static let namedFamilies = 4

    /// The families with the most events over the period, most first.
    var families: [String] {
        var totals: [String: Int] = [:]
        for day in actions.values { for (family, events) in day { totals[family, default: 0] += events } }
        return totals.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
    }

    var chart: Chart {
        let days = period.range.allDays
        let named = Array(families.prefix(Self.namedFamilies))
        var series = named.map { family in
            ChartSeries(name: family, values: days.map { actions[$0]?[family] ?? 0 })
        }
        if families.count > named.count {
            series.append(
                ChartSeries(
                    name: "Other",
                    values: days.map { day in
                        (actions[day] ?? [:]).filter { !named.contains($0.key) }.values.reduce(0, +)
                    }))
        }
        return Chart(
            id: "audit-events", title: "Audit events by day, by action family", kind: .stackedBar, unit: .count,
            xLabel: "Day (UTC)", yLabel: "Events",
            categories: days.map {
                ChartCategory(label: $0.short, href: $0.auditLog())
            },
            series: series)
    }

    /// The period's total events.
    var total: Int { actions.values.reduce(0) { $0 + $1.values.reduce(0, +) } }

    /// What the home says of the last verification and the checkpoint.
    func verification(now: Date) -> [String: Any] {
        var data: [String: Any] = ["verified": latest != nil]
        if let latest {
            data["intact"] = latest.intact
            data["verifiedAt"] = ConsoleTime.text(latest.verifiedAt)
            data["verifiedAgo"] = Durations.ago(latest.verifiedAt, now: now)
            data["chains"] = Figures.grouped(latest.chains)
            data["events"] = Figures.grouped(Int(latest.events))
            data["failure"] = latest.failure ?? ""
        }
        data["hasCheckpoint"] = checkpointTakenAt != nil
        if let checkpointTakenAt {
            data["checkpointAt"] = ConsoleTime.text(checkpointTakenAt)
            data["checkpointAgo"] = Durations.ago(checkpointTakenAt, now: now)
        }
        return data
    }
}

/// A platform admin's home for a period: every shop's orders and sales side by side (each links
/// to its tenant), and operators with live tokens by role.
struct PlatformAdminHome {
    let period: HomePeriod
    let shops: [SalesByShop.Row]
    let roles: [OperatorsByRole.Row]

    var salesChart: Chart {
        Chart(
            id: "shops-sales", title: "Gross sales and refunds by shop (USD)", kind: .bar, unit: .cents, xLabel: "Shop",
            yLabel: "USD",
            categories: shops.map { ChartCategory(label: $0.name, href: "/console/tenants") },
            series: [
                ChartSeries(name: "Gross", values: shops.map { Int($0.figures.grossCents) }),
                ChartSeries(name: "Refunds", values: shops.map { -Int($0.figures.refundedCents) }),
            ])
    }

    var ordersChart: Chart {
        Chart(
            id: "shops-orders", title: "Orders paid by shop", kind: .bar, unit: .count, xLabel: "Shop",
            yLabel: "Orders",
            categories: shops.map { ChartCategory(label: $0.name, href: "/console/tenants") },
            series: [ChartSeries(name: "Orders paid", values: shops.map { $0.figures.orders })])
    }

    /// The shops side by side, one table row each (written in Swift, as the orders board's rows are:
    /// docs/decisions/console-tables-in-swift.md).
    var shopRowsHTML: HTML {
        HTML(
            joining: shops.map {
                """
                <tr><td>\($0.name)</td><td class="num">\(Figures.grouped($0.figures.orders))</td>\
                <td class="num">\(Money.dollars($0.figures.grossCents))</td>\
                <td class="num">\(Money.dollars($0.figures.refundedCents))</td>\
                <td class="num">\(Money.dollars($0.figures.netCents))</td></tr>
                """
            })
    }

    /// Operators and live tokens by role, one table row each.
    var roleRowsHTML: HTML {
        HTML(
            joining: roles.map {
                """
                <tr><td>\($0.role)</td><td class="num">\(Figures.grouped($0.operators))</td>\
                <td class="num">\(Figures.grouped($0.tokens))</td></tr>
                """
            })
    }
}

/// Spans of time in words, as pages show them.
enum Durations {
    /// "just now", "5 minutes ago", "3 hours ago", "2 days ago" (the largest whole unit).
    static func ago(_ date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        return seconds < 60 ? "just now" : words(seconds: seconds) + " ago"
    }

    /// Every unit of `seconds`, largest first: "2 hours", "1 day 12 hours", "1 hour 30 minutes",
    /// "45 seconds"; `none` for zero.
    static func exact(seconds: Int, none: String) -> String {
        guard seconds > 0 else { return none }
        let parts = [(86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second")].compactMap { size, unit in
            let count = seconds / size % (size == 86_400 ? Int.max : size == 3_600 ? 24 : 60)
            return count == 0 ? nil : "\(Figures.grouped(count)) \(unit)\(count == 1 ? "" : "s")"
        }
        return parts.joined(separator: " ")
    }

    /// "1 minute", "2 hours", "3 days": the largest whole unit of `seconds` (at least a minute).
    static func words(seconds: Int) -> String {
        let (count, unit) =
            seconds >= 86_400
            ? (seconds / 86_400, "day")
            : seconds >= 3_600
                ? (seconds / 3_600, "hour")
                : (max(1, seconds / 60), "minute")
        return "\(Figures.grouped(count)) \(unit)\(count == 1 ? "" : "s")"
    }
}
