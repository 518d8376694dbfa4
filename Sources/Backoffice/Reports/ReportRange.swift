import BackofficePlatform
import Foundation

/// The days a report or a home covers, first and last included (UTC), and the equally long
/// stretch before them, which a home compares against.
package struct ReportRange: Sendable, Equatable {
    package let from: UTCDay
    package let through: UTCDay

    /// The longest range a report reads: three years of days.
    package static let longest = 1_096

    /// `from`…`through`, checked: both days real, in order, at most `longest` days.
    /// - Throws: `DomainError.invalid` naming `from` or `to`.
    package init(from: UTCDay, through: UTCDay) throws {
        guard from <= through else {
            throw DomainError.invalid([FieldIssue(field: "to", code: "before_from", message: "must not be before from")]
            )
        }
        guard from.distance(to: through) < Self.longest else {
            throw DomainError.invalid([
                FieldIssue(field: "to", code: "too_long", message: "must be at most \(Self.longest) days after from")
            ])
        }
        self.init(checked: from, through: through)
    }

    private init(checked from: UTCDay, through: UTCDay) { (self.from, self.through) = (from, through) }

    /// The range two texts name (`YYYY-MM-DD`); without them, the `days` days up to `today`.
    package init(from: String?, to: String?, days: Int = 30, today: UTCDay) throws {
        let through = try to.map { try Self.day($0, field: "to") } ?? today
        let from = try from.map { try Self.day($0, field: "from") } ?? through.advanced(by: 1 - days)
        try self.init(from: from, through: through)
    }

    /// The number of days, both ends included.
    package var days: Int { from.distance(to: through) + 1 }

    /// Every day of the range, in order.
    package var allDays: [UTCDay] { Array(from...through) }

    /// The same number of days just before this range.
    package var previous: ReportRange {
        ReportRange(checked: from.advanced(by: -days), through: from.advanced(by: -1))
    }

    static func day(_ text: String, field: String) throws -> UTCDay {
        guard let day = UTCDay(text) else {
            throw DomainError.invalid([
                FieldIssue(field: field, code: "invalid_day", message: "must be a day such as 2026-11-03 (UTC)")
            ])
        }
        return day
    }
}

/// How a report groups its days: each day, ISO weeks (Monday to Sunday) or calendar months; the
/// first and last group are cut to the range.
package enum ReportGranularity: String, Sendable, CaseIterable {
    case day, week, month

    /// The first day of the group `day` falls in (before any cut to a range).
    func start(of day: UTCDay) -> UTCDay {
        switch self {
        case .day: day
        case .week: day.monday
        case .month: day.firstOfMonth
        }
    }
}

/// A daily rollup's rows over a range, as its statement keys them by day: `-1` for every day before
/// the range (their changes open the running figures), else the day's number since 1970-01-01
/// (`CASE WHEN day < <from> THEN -1 ELSE day - DATE '1970-01-01' END`). The rollups keep changes,
/// not totals, so a figure at a day's end is the sum of the changes up to it; `days` walks the range
/// carrying it.
struct DailyChanges<Row> {
    let before: [Row]
    let byDay: [UTCDay: [Row]]

    init(_ rows: [(day: Int32, row: Row)]) {
        before = rows.filter { $0.day < 0 }.map(\.row)
        byDay = Dictionary(grouping: rows.filter { $0.day >= 0 }, by: { UTCDay(number: Int($0.day)) }).mapValues {
            $0.map(\.row)
        }
    }

    /// Each day of `range` in order: `day` makes its figures from that day's rows (none on a quiet day),
    /// moving `running` on (opened by `open` from the rows before the range).
    func days<Running, Day>(
        of range: ReportRange, open: ([Row]) -> Running, _ day: (inout Running, [Row]) throws -> Day
    ) rethrows -> [Day] {
        var running = open(before)
        return try range.allDays.map { try day(&running, byDay[$0] ?? []) }
    }
}
