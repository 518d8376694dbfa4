import BackofficePlatform

/// A chart's value axis: from `low` to `high` in round steps. It encloses every value and zero (bars and
/// sales start at zero; negatives such as refunds go below it); `step` is 1, 2 or 5 × 10^k as the unit shows
/// it (whole dollars for `ChartUnit.cents`, unless the span from the least value to the most, zero included,
/// is under a dollar: then 1, 2, 5, 10, 20 or 50 cents); `low` and `high` are multiples of `step`,
/// `high > low` always, and there are at most `maxTicks + 1` ticks. Values beyond ±`limit` are drawn at
/// the limit.
package struct ChartScale: Equatable, Sendable {
    package let low: Int
    package let high: Int
    package let step: Int

    /// The largest magnitude the axis reaches (ten trillion dollars in cents); larger values are clamped, so
    /// that no step or bound can overflow.
    package static let limit = 1_000_000_000_000_000

    /// Empty `values`, or all zeros: `0...unit.unitStep`. `maxTicks` below 1 counts as 1, and below 2 as 2
    /// when values lie on both sides of zero (zero then needs a tick between the two ends).
    package init(values: [Int], unit: ChartUnit, maxTicks: Int = 6) {
        let clamped = values.map { min(max($0, -Self.limit), Self.limit) }
        let (least, most) = (min(clamped.min() ?? 0, 0), max(clamped.max() ?? 0, 0))
        guard most > least else {
            (low, high, step) = (0, unit.unitStep, unit.unitStep)
            return
        }
        let intervals = max(maxTicks, least < 0 && most > 0 ? 2 : 1)
        var power = unit == .cents && most - least >= 100 ? 100 : 1
        while true {
            let fits = [1, 2, 5].map { $0 * power }.first {
                Self.ceiling(most, $0) - Self.floor(least, $0) <= intervals
            }
            if let fits {
                step = fits
                break
            }
            power *= 10
        }
        low = Self.floor(least, step) * step
        high = Self.ceiling(most, step) * step
    }

    /// The round values labelled on the axis, low to high, `step` apart.
    package var ticks: [Int] { Array(stride(from: low, through: high, by: step)) }

    /// Where `value` stands between `bottom` (for `low`) and `top` (for `high`), linearly; values outside
    /// the axis are drawn at its ends.
    package func position(_ value: Int, top: Double, bottom: Double) -> Double {
        let fraction = (Double(min(max(value, low), high)) - Double(low)) / (Double(high) - Double(low))
        return bottom - fraction * (bottom - top)
    }

    /// `value / step` rounded toward minus infinity.
    private static func floor(_ value: Int, _ step: Int) -> Int {
        let quotient = value / step
        return value % step < 0 ? quotient - 1 : quotient
    }

    /// `value / step` rounded toward plus infinity.
    private static func ceiling(_ value: Int, _ step: Int) -> Int {
        let quotient = value / step
        return value % step > 0 ? quotient + 1 : quotient
    }
}
