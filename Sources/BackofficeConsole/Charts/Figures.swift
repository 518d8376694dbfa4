import BackofficePlatform

/// Numbers as the console's charts write them: pure text, no locale (the console is in US English).
package enum Figures {
    /// Thousands separated by commas: `1234567` → `1,234,567`, `-1234` → `-1,234`, `0` → `0`; defined for
    /// every `Int`, `Int.min` included.
    package static func grouped(_ value: Int) -> String { (value < 0 ? "-" : "") + grouped(magnitude: value.magnitude) }

    /// `magnitude`'s digits in groups of three, separated by commas.
    package static func grouped(magnitude: UInt) -> String {
        let digits = Array(String(magnitude))
        var text = ""
        text.reserveCapacity(digits.count + digits.count / 3)
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    /// A measured value written exactly, with thousands separated: `33993` → `33,993`, `1234567` →
    /// `1,234,567` (never `1.23457e+06`), `1234.5` → `1,234.5`, `-0.25` → `-0.25`. Whole values are
    /// written as integers; others with the shortest digits that read back as the same `Double`.
    /// Without `grouped` (a form's value, read back by `Double(_:)`), no separators: `1234.5`.
    package static func exact(_ value: Double, grouped isGrouped: Bool = true) -> String {
        guard value.isFinite else { return "\(value)" }
        if value == value.rounded(.towardZero), let whole = Int(exactly: value) {
            return isGrouped ? grouped(whole) : String(whole)
        }
        guard isGrouped else { return "\(value)" }
        let text = "\(value.magnitude)"
        guard let point = text.firstIndex(of: "."), !text.contains("e"),
            let whole = UInt(text[..<point])
        else { return "\(value)" }
        return (value < 0 ? "-" : "") + grouped(magnitude: whole) + text[point...]
    }

    /// An SVG coordinate: rounded to one decimal place, without a trailing `.0` (`12.25` → `12.3`, `4.0` → `4`).
    package static func coordinate(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let tenths = Int((value * 10).rounded())
        let (whole, fraction) = (tenths.magnitude / 10, tenths.magnitude % 10)
        return (tenths < 0 ? "-" : "") + String(whole) + (fraction == 0 ? "" : "." + String(fraction))
    }
}

/// What a chart's values count, and so how they are written. The unit only formats values: each chart
/// carries its own axis label (`Chart.yLabel`).
package enum ChartUnit: Sendable, Hashable {
    /// Things counted: orders, units, customers.
    case count
    /// Money in US cents, written in dollars.
    case cents
    /// Points of a kind a domain names, counted and written with its short name (`FP`).
    case points(String)

    /// A value in full: `1,234`; `$1,234.56` (negative: `-$12.50`); `1,234 FP`.
    package func text(_ value: Int) -> String {
        switch self {
        case .count: Figures.grouped(value)
        case .cents: dollars(value, cents: true)
        case .points(let name): Figures.grouped(value) + " " + name
        }
    }

    /// A value as an axis tick shows it: as `text(_:)`, except that a whole number of dollars drops its
    /// cents (`$1,200`, `-$5`), so the labels stay short; a tick that is not whole keeps them (`$0.50`).
    package func tickText(_ value: Int) -> String {
        self == .cents ? dollars(value, cents: !value.isMultiple(of: 100)) : text(value)
    }

    /// The unit's short name, for the parentheses of an axis label or a title: `count`, `USD`, `FP`.
    package var axisName: String {
        switch self {
        case .count: "count"
        case .cents: "USD"
        case .points(let name): name
        }
    }

    /// The smallest step an axis of this unit moves by when every value is zero: one, or one dollar.
    package var unitStep: Int { self == .cents ? 100 : 1 }

    private func dollars(_ value: Int, cents: Bool) -> String {
        let (whole, fraction) = (value.magnitude / 100, value.magnitude % 100)
        let tail = cents ? (fraction < 10 ? ".0" : ".") + String(fraction) : ""
        return (value < 0 ? "-$" : "$") + Figures.grouped(magnitude: whole) + tail
    }
}
