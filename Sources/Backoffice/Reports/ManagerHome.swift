import BackofficeConsole
import BackofficePlatform
import Foundation

/// A backend manager's home for a period: locked and deleted customers at the end of each day
/// (active ones as a total with its change), new locks and appeals by day with the open appeals'
/// age, the reward economy's flows and the issuance account's balance, the challenges running now
/// and the shop applications waiting.
struct ManagerHome {
    let period: HomePeriod
    let customers: [[AccountStatus: Int]]
    let locks: LocksAndAppeals.Figures
    let flows: [FitPointsFlows.Day]
    let challenges: [RunningChallenges.Row]
    let applications: (count: Int, oldest: Date?)

    var days: [UTCDay] { period.range.allDays }
    /// Each day opens that day's events in the audit log (`action` only, when given).
    func categories(action: String? = nil) -> [ChartCategory] {
        days.map { ChartCategory(label: $0.short, href: $0.auditLog(action: action)) }
    }

    var customersChart: Chart {
        Chart(
            id: "customers", title: "Locked and deleted customers at each day's end", kind: .line, unit: .count,
            xLabel: "Day (UTC)", yLabel: "Customers", categories: categories(),
            series: [
                ChartSeries(name: "Locked", values: customers.map { $0[.locked] ?? 0 }),
                ChartSeries(name: "Deleted", values: customers.map { $0[.deleted] ?? 0 }),
            ])
    }

    var locksChart: Chart {
        Chart(
            id: "locks-appeals", title: "New locks and appeals by day", kind: .bar, unit: .count, xLabel: "Day (UTC)",
            yLabel: "Count", categories: categories(action: "accounts.lock"),
            series: [
                ChartSeries(name: "Locks", values: days.map { locks.locks[$0] ?? 0 }),
                ChartSeries(name: "Appeals", values: days.map { locks.appeals[$0] ?? 0 }),
            ])
    }

    var flowsChart: Chart {
        Chart(
            id: "fitpoints-flows", title: "FitPoints issued, redeemed and expired by day", kind: .bar,
            unit: .fitPoints, xLabel: "Day (UTC)", yLabel: "FitPoints", categories: categories(),
            series: [
                ChartSeries(name: "Issued", values: flows.map { Int($0.issued) }),
                ChartSeries(name: "Redeemed", values: flows.map { Int($0.redeemed) }),
                ChartSeries(name: "Expired", values: flows.map { Int($0.expired) }),
            ])
    }

    var balanceChart: Chart {
        Chart(
            id: "issuance-balance", title: "The issuance account's balance at each day's end", kind: .line,
            unit: .fitPoints, xLabel: "Day (UTC)", yLabel: "FitPoints", categories: categories(),
            series: [ChartSeries(name: "Balance", values: flows.map { Int($0.issuanceBalance) })])
    }

    /// The cards: active customers, open appeals, applications waiting.
    func cards(now: Date) -> [[String: String]] {
        let active = customers.last?[.active] ?? 0
        let first = customers.first?[.active] ?? 0
        return [
            [
                "label": "Active customers", "value": Figures.grouped(active),
                "change": Change.text(Int64(active), against: Int64(first)) + " in the period",
                "href": "/console/accounts",
            ],
            [
                "label": "Open appeals", "value": Figures.grouped(locks.openAppeals),
                "change": locks.oldestOpenAppeal.map { "oldest filed " + Durations.ago($0, now: now) }
                    ?? "none waiting",
                "href": "/console/appeals",
            ],
            [
                "label": "Shop applications waiting", "value": Figures.grouped(applications.count),
                "change": applications.oldest.map { "oldest sent " + Durations.ago($0, now: now) } ?? "none waiting",
                "href": "/console/shop-applications",
            ],
        ]
    }

    func challengeRows(now: Date) -> [[String: String]] {
        challenges.map {
            let endsAt = ConsoleTime.text($0.endsAt)
            return [
                "id": $0.id.text, "name": $0.name, "participants": Figures.grouped($0.participants),
                "reached": $0.reachedTarget.map(Figures.grouped) ?? "no target",
                "ends": "in " + Durations.words(seconds: Int($0.endsAt.timeIntervalSince(now))),
                "endsAt": endsAt.utc, "endsAtTitle": endsAt.utcText,
            ]
        }
    }
}
