import BackofficePlatform
import Foundation

/// Proration to the cent, in whole numbers: what is left of a paid period, and what a change of
/// plan charges. Time is counted in whole seconds; a fraction of a cent rounds to the nearest cent,
/// a half to the even one (so a period split in two halves is never charged a cent more than its
/// price, summed over many changes).
package enum Proration {
    /// The part of `cents`, paid for `period`, not yet used at `instant`: `cents` × the seconds left
    /// ÷ the period's seconds, rounded; all of it before the period starts, nothing after it ends.
    package static func unused(_ cents: Int64, of period: Range<Date>, at instant: Date) -> Int64 {
        let start = seconds(period.lowerBound)
        let total = seconds(period.upperBound) - start
        guard total > 0 else { return 0 }
        let left = min(max(seconds(period.upperBound) - seconds(instant), 0), total)
        return rounded(cents * left, dividedBy: total)
    }

    /// What changing plans at `instant` charges at once: the new plan's price for a period that
    /// starts then, less the unused part of the old plan's payment for `period`. Negative: a credit,
    /// taken off the invoices that follow.
    package static func change(from oldCents: Int64, paidFor period: Range<Date>, to newCents: Int64, at instant: Date)
        -> Int64
    {
        newCents - unused(oldCents, of: period, at: instant)
    }

    /// `numerator` ÷ `denominator` (both positive) to the nearest whole number, a half to the even one.
    static func rounded(_ numerator: Int64, dividedBy denominator: Int64) -> Int64 {
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        if 2 * remainder > denominator || (2 * remainder == denominator && quotient % 2 == 1) { return quotient + 1 }
        return quotient
    }

    private static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
}
