import BackofficeConsole
import BackofficePlatform
import Foundation

/// A customer's weight over time as an inline SVG line chart, written on the server: no script, and
/// every value interpolated into `HTML` (escaped by construction). The chart is an image for
/// sighted readers (`role="img"` with its title and a one-line summary); the same points are in
/// the table under it, which is what screen readers and copying use. Pure: no I/O.
struct WeightChart {
    let points: [HealthProfile.WeightPoint]

    /// The drawing's size in SVG units; it scales to its container's width.
    static let (width, height) = (640.0, 240.0)
    /// Room for the axis labels: left, right, top, bottom.
    static let (left, right, top, bottom) = (56.0, 16.0, 16.0, 40.0)

    /// The y axis: whole kilograms on a round step, enclosing every point with a margin.
    struct Scale: Equatable {
        let low: Int
        let high: Int
        let step: Int

        init(kilograms values: [Double]) {
            let (least, most) = (values.min() ?? 0, values.max() ?? 0)
            let span = max(most - least, 1)
            step = [1, 2, 5, 10, 20, 50].first { span / Double($0) <= 5 } ?? 100
            low = Int((least / Double(step)).rounded(.down)) * step
            high = max(Int((most / Double(step)).rounded(.up)) * step, low + step)
        }

        /// The round values labelled on the axis, low to high.
        var ticks: [Int] { Array(stride(from: low, through: high, by: step)) }
    }

    var kilograms: [Double] { points.map { Double($0.weightHG) / 10 } }

    /// The chart (nothing when there are no points).
    var svg: HTML {
        guard let first = points.first, let last = points.last else { return .empty }
        let scale = Scale(kilograms: kilograms)
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let span = last.at.timeIntervalSince(first.at)
        func x(_ at: Date) -> Int {
            Int((Self.left + (span > 0 ? at.timeIntervalSince(first.at) / span : 0.5) * plotWidth).rounded())
        }
        func y(_ kg: Double) -> Int {
            Int((Self.top + (1 - (kg - Double(scale.low)) / Double(scale.high - scale.low)) * plotHeight).rounded())
        }
        let grid = HTML(
            joining: scale.ticks.map { tick in
                let at = y(Double(tick))
                return """
                    <line class="grid" x1="\(Int(Self.left))" x2="\(Int(Self.width - Self.right))" y1="\(at)" \
                    y2="\(at)"/><text class="tick" x="\(Int(Self.left) - 8)" y="\(at + 6)" \
                    text-anchor="end">\(tick)</text>
                    """
            })
        let coordinates = zip(points, kilograms).map { "\(x($0.at)),\(y($1))" }.joined(separator: " ")
        let dots = HTML(
            joining: zip(points, kilograms).map { point, kg in
                "<circle class=\"dot\" cx=\"\(x(point.at))\" cy=\"\(y(kg))\" r=\"3\"/>"
            })
        let baseline = Int(Self.height - Self.bottom)
        return """
            <svg class="chart" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" \
            aria-labelledby="weight-chart-title weight-chart-summary" preserveAspectRatio="xMidYMid meet">\
            <title id="weight-chart-title">Weight over time (kg)</title>\
            <desc id="weight-chart-summary">\(summary)</desc>\(grid)\
            <text class="axis" x="\(Int(Self.left))" y="\(baseline + 30)">\(HealthEntry.dayText(first.at))</text>\
            <text class="axis" x="\(Int(Self.width - Self.right))" y="\(baseline + 30)" \
            text-anchor="end">\(HealthEntry.dayText(last.at))</text>\
            <polyline class="line" points="\(coordinates)"/>\(dots)</svg>
            """
    }

    /// One sentence for the chart's description: from what to what, between which days.
    var summary: String {
        guard let first = points.first, let last = points.last else { return "No weights recorded." }
        let (from, to) = (kilograms.first ?? 0, kilograms.last ?? 0)
        return points.count == 1
            ? "One weight: \(Self.kg(from)) kg on \(HealthEntry.dayText(first.at))."
            : """
            \(points.count) weights from \(Self.kg(from)) kg on \(HealthEntry.dayText(first.at)) to \
            \(Self.kg(to)) kg on \(HealthEntry.dayText(last.at)).
            """
    }

    /// The table's rows: the day and the weight of each point, as plotted.
    var rows: [[String: String]] {
        zip(points, kilograms).map { ["at": HealthEntry.dayText($0.at), "kg": Self.kg($1)] }
    }

    static func kg(_ value: Double) -> String { String(format: "%.1f", value) }
}
