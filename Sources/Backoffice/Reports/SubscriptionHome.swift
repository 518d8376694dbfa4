import BackofficeConsole
import BackofficePlatform
import Foundation

/// The subscription business on a backend manager's home for a period: monthly recurring revenue
/// and paying subscribers at each day's end, subscribers who started and who churned by day, the
/// renewal charges declined and the revenue a retry recovered (`SubscriptionFiguresOverTime`).
struct SubscriptionHome {
    let period: HomePeriod
    let days: [SubscriptionFiguresOverTime.Day]

    private var categories: [ChartCategory] {
        period.range.allDays.map { ChartCategory(label: $0.short, href: $0.auditLog(action: nil)) }
    }

    var revenueChart: Chart {
        Chart(
            id: "mrr", title: "Monthly recurring revenue at each day's end", kind: .line, unit: .cents,
            xLabel: "Day (UTC)", yLabel: "MRR", categories: categories,
            series: [ChartSeries(name: "MRR", values: days.map { Int($0.mrrCents) })])
    }

    var subscribersChart: Chart {
        Chart(
            id: "subscribers", title: "Subscribers who started and who churned by day", kind: .bar, unit: .count,
            xLabel: "Day (UTC)", yLabel: "Subscribers", categories: categories,
            series: [
                ChartSeries(name: "Started", values: days.map(\.started)),
                ChartSeries(name: "Churned", values: days.map(\.churned)),
            ])
    }

    var renewalsChart: Chart {
        Chart(
            id: "failed-renewals", title: "Renewal charges declined by day", kind: .bar, unit: .count,
            xLabel: "Day (UTC)", yLabel: "Charges", categories: categories,
            series: [ChartSeries(name: "Declined", values: days.map(\.failedRenewals))])
    }

    /// The cards: MRR and paying subscribers at the period's end (with the change since its first
    /// day's end), the declined renewals and the revenue recovered in the period.
    var cards: [[String: String]] {
        let zero = SubscriptionFiguresOverTime.Day(
            started: 0, churned: 0, failedRenewals: 0, recoveredCents: 0, paying: 0, mrrCents: 0)
        let (first, last) = (days.first ?? zero, days.last ?? zero)
        let recovered = days.reduce(Int64(0)) { $0 + $1.recoveredCents }
        return [
            [
                "label": "Monthly recurring revenue", "value": Money.dollars(last.mrrCents),
                "change": Change.text(last.mrrCents, against: first.mrrCents) + " in the period",
                "href": "/console/billing?status=active",
            ],
            [
                "label": "Paying subscribers", "value": Figures.grouped(last.paying),
                "change": "\(Figures.grouped(days.reduce(0) { $0 + $1.started })) started, "
                    + "\(Figures.grouped(days.reduce(0) { $0 + $1.churned })) churned",
                "href": "/console/billing?status=active",
            ],
            [
                "label": "Renewal charges declined",
                "value": Figures.grouped(days.reduce(0) { $0 + $1.failedRenewals }),
                "change": "retried on the dunning schedule", "href": "/console/billing",
            ],
            [
                "label": "Revenue recovered by a retry", "value": Money.dollars(recovered),
                "change": "renewals paid after a decline", "href": "/console/billing",
            ],
        ]
    }
}
