import BackofficeConsole
import BackofficePlatform
import Foundation

/// A shop's home for a period: the totals with their change against the stretch before, net
/// sales by day against that stretch, gross and refunds by day, the orders placed by the state
/// they are in now, and the best-selling goods. Every figure comes from `DailySales`,
/// `DailyOrderStates` and `BestSellers` (the sales report's own queries), and each day links to
/// the orders placed that day.
struct ShopHome {
    let period: HomePeriod
    /// Each day of the period and of the stretch compared with it (`DailySales`).
    let current: [SalesFigures]
    let previous: [SalesFigures]
    let states: [UTCDay: [Order.Status: Int]]
    let bestSellers: [BestSeller]

    /// The states the orders chart stacks, each a group of the board's states.
    static let stateGroups: [(label: String, states: [Order.Status])] = [
        ("To accept", [.paid]), ("To ship", [.accepted]), ("Shipped or delivered", [.shipped, .delivered]),
        ("Cancelled or refunded", [.cancelled, .refunded, .paymentFailed]), ("Awaiting payment", [.pendingPayment]),
    ]

    /// Where a day's figures lead: the orders placed that day.
    static func ordersHref(_ day: UTCDay) -> String { "/console/orders?day=\(day)" }

    var categories: [ChartCategory] {
        period.range.allDays.map { ChartCategory(label: $0.short, href: Self.ordersHref($0)) }
    }

    /// Net sales by day, this period and the one before (matched day by day).
    var netChart: Chart {
        Chart(
            id: "net-sales", title: "Net sales by day (USD)", kind: .line, unit: .cents, xLabel: "Day placed (UTC)",
            yLabel: "Net sales (USD)", categories: categories,
            series: [
                ChartSeries(name: "This period", values: current.map { Int($0.netCents) }),
                ChartSeries(name: "Period before", values: previous.prefix(current.count).map { Int($0.netCents) }),
            ])
    }

    /// Gross (up) and refunds (down) by day.
    var grossChart: Chart {
        Chart(
            id: "gross-refunds", title: "Gross sales and refunds by day (USD)", kind: .bar, unit: .cents,
            xLabel: "Day (UTC)", yLabel: "USD", categories: categories,
            series: [
                ChartSeries(name: "Gross", values: current.map { Int($0.grossCents) }),
                ChartSeries(name: "Refunds", values: current.map { -Int($0.refundedCents) }),
            ])
    }

    /// The orders placed each day, stacked by the state they are in now.
    var statesChart: Chart {
        let days = period.range.allDays
        return Chart(
            id: "order-states", title: "Orders placed by day, by state now", kind: .stackedBar, unit: .count,
            xLabel: "Day placed (UTC)", yLabel: "Orders", categories: categories,
            series: Self.stateGroups.map { group in
                ChartSeries(
                    name: group.label,
                    values: days.map { day in group.states.reduce(0) { $0 + (states[day]?[$1] ?? 0) } })
            })
    }

    /// The period's totals beside the stretch before: label, value, change.
    var totals: [[String: String]] {
        let now = current.total ?? SalesFigures(start: period.range.from, end: period.range.through)
        let before = previous.total ?? SalesFigures(start: period.compared.from, end: period.compared.through)
        func card(_ label: String, _ value: String, _ a: Int64, _ b: Int64) -> [String: String] {
            ["label": label, "value": value, "change": Change.text(a, against: b)]
        }
        return [
            card("Net sales", Money.dollars(now.netCents), now.netCents, before.netCents),
            card("Gross sales", Money.dollars(now.grossCents), now.grossCents, before.grossCents),
            card("Refunds", Money.dollars(now.refundedCents), now.refundedCents, before.refundedCents),
            card("Orders paid", Figures.grouped(now.orders), Int64(now.orders), Int64(before.orders)),
            card(
                "FitPoints redeemed", ChartUnit.fitPoints.text(Int(now.netFitPoints)), now.netFitPoints,
                before.netFitPoints),
        ]
    }

    /// The best sellers' rows: name, units, revenue and the sparkline of units by day.
    /// The best sellers, one table row each: the good (a link, its sku), units, revenue and the
    /// sparkline of its units by day.
    var bestSellerRowsHTML: HTML {
        HTML(
            joining: bestSellers.map { good in
                let revenue = [
                    good.revenueCents > 0 || good.revenueFitPoints == 0 ? Money.dollars(good.revenueCents) : nil,
                    good.revenueFitPoints > 0 ? ChartUnit.fitPoints.text(Int(good.revenueFitPoints)) : nil,
                ].compactMap { $0 }.joined(separator: " + ")
                let sparkline = Sparkline(label: "\(good.name): units by day", values: good.daily.map(Int.init)).svg
                return """
                    <tr><td><a href="/console/goods/\(good.goodID.text)">\(good.name)</a> <code>\(good.sku)</code></td>\
                    <td class="num">\(Figures.grouped(Int(good.units)))</td><td class="num">\(revenue)</td>\
                    <td>\(sparkline)</td></tr>
                    """
            })
    }
}
