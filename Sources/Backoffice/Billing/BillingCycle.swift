import BackofficePlatform
import Foundation

/// A subscription's billing periods, counted from its anchor (the moment it first became paid):
/// period `n` starts `n` intervals later, on the anchor's day of the month at the anchor's time of
/// day in UTC, or on the month's last day when the month is shorter (an anchor on January 31 renews
/// on February 28, then March 31), as Stripe's billing cycle anchor does. Pure arithmetic over
/// `UTCDay`: no calendar or time zone is consulted.
package struct BillingCycle: Sendable, Equatable {
    package let anchor: Date
    package let interval: BillingInterval

    package init(anchor: Date, interval: BillingInterval) { (self.anchor, self.interval) = (anchor, interval) }

    /// When period `number` starts (0: the anchor).
    package func start(ofPeriod number: Int) -> Date {
        let day = UTCDay(anchor)
        let timeOfDay = anchor.timeIntervalSince(day.start)
        let (year, month, dayOfMonth) = day.civil
        let months = (month - 1) + number * interval.months
        let (targetYear, targetMonth) = (
            year + months.floorDivided(by: 12), months - months.floorDivided(by: 12) * 12 + 1
        )
        let length = UTCDay.length(ofMonth: targetMonth, in: targetYear)
        return UTCDay(year: targetYear, month: targetMonth, day: min(dayOfMonth, length)).start.addingTimeInterval(
            timeOfDay)
    }

    /// Period `number`'s start and end (the next period's start).
    package func period(_ number: Int) -> Range<Date> { start(ofPeriod: number)..<start(ofPeriod: number + 1) }

    /// The first period that starts at `date` or later (the renewal of a period ending at `date`):
    /// found from an estimate in whole months, then at most a few steps.
    package func period(startingAtOrAfter date: Date) -> Range<Date> {
        let (fromYear, fromMonth, _) = UTCDay(anchor).civil
        let (toYear, toMonth, _) = UTCDay(date).civil
        var number = max(0, ((toYear - fromYear) * 12 + (toMonth - fromMonth)) / interval.months - 1)
        while start(ofPeriod: number) < date { number += 1 }
        return period(number)
    }
}

extension Int {
    /// The quotient rounded toward minus infinity.
    fileprivate func floorDivided(by divisor: Int) -> Int {
        Int(Int64(self).floorDivided(by: Int64(divisor)))
    }
}
