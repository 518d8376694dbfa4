import BackofficePlatform
import Foundation

/// A calendar day in UTC, the day every report and chart counts by: a number of days since
/// 1970-01-01, written `2026-11-03`. Pure arithmetic (Howard Hinnant's civil-day algorithms, the
/// audit log's canonical form one way), so
/// no calendar or time zone is consulted and a day's text and number always agree.
package struct UTCDay: Sendable, Hashable, Comparable, Strideable, CustomStringConvertible {
    /// Days since 1970-01-01 (negative before it).
    package let number: Int

    package init(number: Int) { self.number = number }

    /// The UTC day `date` falls on.
    package init(_ date: Date) { number = Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// The day `text` names (`YYYY-MM-DD`, a real date in the years 0001–9999, as PostgreSQL's
    /// `date` reads them), or nil.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
            let year = Int(parts[0]), year >= 1, let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...Self.length(ofMonth: month, in: year)).contains(day)
        else { return nil }
        number = Self.days(year: year, month: month, day: day)
    }

    /// The first day of `month` (1–12) in `year`.
    package init(year: Int, month: Int, day: Int = 1) { number = Self.days(year: year, month: month, day: day) }

    /// The day's first instant.
    package var start: Date { Date(timeIntervalSince1970: Double(number) * 86_400) }

    /// The year, month (1–12) and day of the month.
    package var civil: (year: Int, month: Int, day: Int) {
        let (year, month, day) = Self.civil(daysSince1970: Int64(number))
        return (Int(year), Int(month), Int(day))
    }

    /// `2026-11-03`: RFC 3339's full-date, the year always in four digits (`0582-08-21`).
    package var description: String {
        let (year, month, day) = civil
        let digits = String(year)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
            + "-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }

    /// `Nov 3`: a chart's axis label.
    package var short: String { "\(Self.monthNames[civil.month - 1]) \(civil.day)" }

    /// The first day of this day's month.
    package var firstOfMonth: UTCDay { UTCDay(year: civil.year, month: civil.month) }

    /// The last day of this day's month.
    package var lastOfMonth: UTCDay {
        let (year, month, _) = civil
        return UTCDay(year: year, month: month, day: Self.length(ofMonth: month, in: year))
    }

    /// The Monday of this day's ISO week (1970-01-01 was a Thursday).
    package var monday: UTCDay { UTCDay(number: number - ((number % 7 + 7 + 3) % 7)) }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (H. Hinnant's `civil_from_days`).
    package static func civil(daysSince1970 z: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = z + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    package static func < (a: UTCDay, b: UTCDay) -> Bool { a.number < b.number }
    package func distance(to other: UTCDay) -> Int { other.number - number }
    package func advanced(by days: Int) -> UTCDay { UTCDay(number: number + days) }

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The days in `month` (1–12) of `year`, in the proleptic Gregorian calendar.
    package static func length(ofMonth month: Int, in year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int64 {
    /// The quotient rounded toward minus infinity.
    package func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    package func floorModulo(_ divisor: Int64) -> Int64 { self - floorDivided(by: divisor) * divisor }
}
