import BackofficeConsole
import BackofficePlatform
import Foundation

/// The stretch a home shows, chosen with its period picker: the last 7, 30 or 90 days up to
/// today, or a calendar month (this month up to today); and the stretch it is compared with (as
/// many days just before; the month before, or as many of its first days). Days are UTC.
struct HomePeriod: Equatable {
    /// The query's value: `7`, `30`, `90` or a month `2026-11`.
    let key: String
    let range: ReportRange
    let compared: ReportRange

    /// The lengths the picker offers, in days.
    static let lengths = [7, 30, 90]

    /// The period `period` (a length) or `month` (`YYYY-MM`) names; the last 30 days without either.
    /// - Throws: `DomainError.invalid` naming the field.
    init(period: String?, month: String?, today: UTCDay) throws {
        if let month {
            guard let first = UTCDay(month + "-01") else {
                throw DomainError.invalid([
                    FieldIssue(field: "month", code: "invalid_month", message: "must be a month such as 2026-11")
                ])
            }
            let before = first.advanced(by: -1).firstOfMonth
            key = month
            if (first...first.lastOfMonth).contains(today) {
                // This month so far, against as many days of the month before (no future days drawn).
                range = try ReportRange(from: first, through: today)
                compared = try ReportRange(
                    from: before, through: min(before.advanced(by: range.days - 1), before.lastOfMonth))
            } else {
                range = try ReportRange(from: first, through: first.lastOfMonth)
                compared = try ReportRange(from: before, through: before.lastOfMonth)
            }
            return
        }
        guard let days = period.map({ Int($0) }) ?? 30, Self.lengths.contains(days) else {
            throw DomainError.invalid([
                FieldIssue(field: "period", code: "invalid_period", message: "must be 7, 30 or 90 (days)")
            ])
        }
        key = String(days)
        range = try ReportRange(from: today.advanced(by: 1 - days), through: today)
        compared = range.previous
    }

    /// The picker's links: each length, this month and the month before, the current one marked.
    func choices(path: String, today: UTCDay) -> [ConsoleNavigation.Item] {
        let thisMonth = String(today.description.prefix(7))
        let lastMonth = String(today.firstOfMonth.advanced(by: -1).description.prefix(7))
        return Self.lengths.map {
            .link(href: "\(path)?period=\($0)", label: "\($0) days", current: key == String($0))
        } + [
            .link(href: "\(path)?month=\(thisMonth)", label: "This month", current: key == thisMonth),
            .link(href: "\(path)?month=\(lastMonth)", label: "Last month", current: key == lastMonth),
        ]
    }

    /// How the page names the stretch: "Nov 1 – Nov 30, 2026 (UTC)".
    var label: String { "\(range.from.short) – \(range.through.short), \(range.through.civil.year) (UTC)" }
}

/// A figure's change against the stretch it is compared with, as the home shows it.
enum Change {
    /// "+12.5%", "-3.0%", "no change", "new" (nothing before), or "—" (nothing either time).
    static func text(_ current: Int64, against previous: Int64) -> String {
        if previous == 0 { return current == 0 ? "—" : "new" }
        if current == previous { return "no change" }
        let percent = Double(current - previous) / Double(abs(previous)) * 100
        return (percent > 0 ? "+" : "") + String(format: "%.1f%%", percent)
    }
}
