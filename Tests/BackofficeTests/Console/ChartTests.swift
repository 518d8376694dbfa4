import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Charts: round scales, figures in the unit, SVG whose marks carry the table's values, escaped labels")
struct ChartTests {
    static let hostile = "<script>&\"'"
    static let escaped = "&lt;script&gt;&amp;&quot;&#39;"

    /// Thirty days of sales and refunds (negative), the categories linked or not.
    static func days(_ kind: ChartKind, linked: Bool = false, series count: Int = 2) -> Chart {
        let categories = (1...30).map {
            ChartCategory(label: "Nov \($0)", href: linked ? "/console/orders?day=\($0)" : nil)
        }
        let all = [
            ChartSeries(name: "Net sales", values: (1...30).map { $0 * 4_150 + ($0 % 7) * 990 }),
            ChartSeries(name: "Refunds", values: (1...30).map { $0 % 4 == 0 ? -$0 * 300 : 0 }),
            ChartSeries(name: "Fees", values: (1...30).map { 500 + $0 * 10 }),
        ]
        return Chart(
            id: "sales", title: "Sales by day (USD)", kind: kind, unit: .cents, xLabel: "Day (UTC)",
            yLabel: "Net sales (USD)", categories: categories, series: Array(all.prefix(count)))
    }

    static func chart(
        _ kind: ChartKind, _ labels: [String], _ series: [ChartSeries], unit: ChartUnit = .count, href: String? = nil
    ) -> Chart {
        Chart(
            id: "c", title: "Units", kind: kind, unit: unit, xLabel: "Good", yLabel: "Units",
            categories: labels.map { ChartCategory(label: $0, href: href) }, series: series)
    }

    /// Every raw value the drawing's marks carry (`data-value` of bars and dots, `data-values` of lines).
    static func drawn(_ svg: HTML) -> [Int] {
        svg.text.matches(of: #/data-values?="([-0-9 ]*)"/#).flatMap {
            $0.output.1.split(separator: " ").compactMap { Int($0) }
        }
    }

    /// Every table cell's raw value, with the text it shows.
    static func tabled(_ table: HTML) -> [(value: Int, text: String)] {
        table.text.matches(of: #/<td class="num" data-value="(-?[0-9]+)">([^<]*)</td>/#).compactMap { match in
            Int(match.output.1).map { ($0, String(match.output.2)) }
        }
    }

    /// The number in attribute `name` of `element`.
    static func number(_ name: String, in element: Substring) -> Double? {
        guard let start = element.range(of: " \(name)=\"") else { return nil }
        return Double(element[start.upperBound...].prefix { $0 != "\"" })
    }

    /// The first element of `svg` that starts with `prefix` and has the attribute `attribute`.
    static func element(_ prefix: String, with attribute: String, in svg: HTML) -> Substring? {
        svg.text.split(separator: "<").first { $0.hasPrefix(prefix) && $0.contains(attribute) }
    }

    @Test("figures grouped by thousands with commas, the sign first; every Int, Int.min included")
    func grouped() {
        #expect(Figures.grouped(0) == "0" && Figures.grouped(999) == "999" && Figures.grouped(1000) == "1,000")
        #expect(Figures.grouped(1_234_567) == "1,234,567" && Figures.grouped(-1234) == "-1,234")
        #expect(Figures.grouped(-1_234_567) == "-1,234,567" && Figures.grouped(-999) == "-999")
        #expect(Figures.grouped(Int.max) == "9,223,372,036,854,775,807")
        #expect(Figures.grouped(Int.min) == "-9,223,372,036,854,775,808")
        #expect([Figures.coordinate(12.25), Figures.coordinate(4), Figures.coordinate(-0.5)] == ["12.3", "4", "-0.5"])
    }

    @Test("units write values in full (dollars with cents, FP) and ticks drop the cents of whole dollars")
    func unitTexts() {
        #expect(ChartUnit.count.text(1234) == "1,234" && ChartUnit.fitPoints.text(1234) == "1,234 FP")
        #expect(ChartUnit.cents.text(123_456) == "$1,234.56" && ChartUnit.cents.text(-1250) == "-$12.50")
        #expect(ChartUnit.cents.text(0) == "$0.00" && ChartUnit.cents.text(5) == "$0.05")
        #expect(ChartUnit.cents.tickText(120_000) == "$1,200" && ChartUnit.cents.tickText(-500) == "-$5")
        #expect(ChartUnit.cents.tickText(50) == "$0.50" && ChartUnit.count.tickText(1200) == "1,200")
        #expect([ChartUnit.count, .cents, .fitPoints].map(\.axisName) == ["count", "USD", "FP"])
    }

    @Test("scales: round steps enclosing every value and zero, bounds and ticks on the step, at most maxTicks + 1")
    func scales() {
        #expect(ChartScale(values: [3, 17], unit: .count).ticks == [0, 5, 10, 15, 20])
        #expect(ChartScale(values: [0, 1234], unit: .count).ticks == [0, 500, 1000, 1500])
        #expect(ChartScale(values: [-7, 12], unit: .count).ticks == [-10, -5, 0, 5, 10, 15])
        #expect(ChartScale(values: [0, 123_456], unit: .cents).ticks == [0, 50_000, 100_000, 150_000])
        #expect(ChartScale(values: [150], unit: .cents).ticks == [0, 100, 200], "whole dollars")
        #expect(ChartScale(values: [25, 80], unit: .cents).ticks == [0, 20, 40, 60, 80], "under a dollar: cents")
        #expect(ChartScale(values: [7], unit: .count) == ChartScale(values: [0, 7, 8], unit: .count))
        #expect(ChartScale(values: [7], unit: .count).ticks == [0, 2, 4, 6, 8], "one value: from zero")
        #expect(ChartScale(values: [-3], unit: .count).ticks == [-3, -2, -1, 0])
        for (values, unit) in [([], ChartUnit.count), ([0, 0], .count), ([], .cents), ([0], .cents), ([], .fitPoints)] {
            let scale = ChartScale(values: values, unit: unit)
            #expect(scale.low == 0 && scale.high == unit.unitStep && scale.step == unit.unitStep, "\(values) \(unit)")
        }
        let spans = [
            [1], [9], [11], [0, 99], [-1, 1], [-250_000, 1_000_000], [12_345_678], [-5, -3], [Int.max, Int.min],
        ]
        for values in spans {
            for unit in [ChartUnit.count, .cents] {
                for maxTicks in [0, 1, 2, 4, 6, 10] {
                    Self.check(ChartScale(values: values, unit: unit, maxTicks: maxTicks), values, unit, maxTicks)
                }
            }
        }
        let scale = ChartScale(values: [-10, 30], unit: .count)
        #expect(scale.position(-10, top: 20, bottom: 220) == 220 && scale.position(30, top: 20, bottom: 220) == 20)
        #expect(scale.position(10, top: 20, bottom: 220) == 120 && scale.position(99, top: 20, bottom: 220) == 20)
    }

    static func check(_ scale: ChartScale, _ values: [Int], _ unit: ChartUnit, _ maxTicks: Int) {
        let clamped = values.map { min(max($0, -ChartScale.limit), ChartScale.limit) }
        let context = "\(values) \(unit) \(maxTicks): \(scale)"
        #expect(scale.low <= min(clamped.min() ?? 0, 0) && scale.high >= max(clamped.max() ?? 0, 0), "\(context)")
        #expect(scale.high > scale.low && scale.ticks.allSatisfy { $0.isMultiple(of: scale.step) }, "\(context)")
        let bothSides = (clamped.min() ?? 0) < 0 && (clamped.max() ?? 0) > 0
        #expect(scale.ticks.count <= max(maxTicks, bothSides ? 2 : 1) + 1, "\(context)")
        var mantissa = scale.step
        while mantissa.isMultiple(of: 10) { mantissa /= 10 }
        #expect([1, 2, 5].contains(mantissa), "\(context)")
        if unit == .cents && scale.high - scale.low > 100 { #expect(scale.step.isMultiple(of: 100), "\(context)") }
    }

    @Test("a line chart: a polyline per series (the second dashed), an image named by its title and summary")
    func lineChart() {
        let chart = Self.days(.line)
        let svg = chart.svg.text
        #expect(svg.contains("role=\"img\" aria-labelledby=\"sales-title sales-desc\""))
        #expect(svg.contains("<title id=\"sales-title\">Sales by day (USD)</title><desc id=\"sales-desc\">"))
        #expect(svg.contains("class=\"line series-1\"") && svg.contains("class=\"line series-2\""))
        #expect(!svg.contains("<a ") && !svg.contains("style=") && !svg.contains("<script"))
        #expect(
            chart.summary
                == "30 entries from Nov 1 to Nov 30; Net sales from $51.40 to $1,264.80; Refunds from -$84.00 to $0.00."
        )
        let labels = svg.matches(of: #/text-anchor="middle">(Nov [0-9]+)</text>/#).map { String($0.output.1) }
        #expect(labels.count <= 6 && labels.first == "Nov 1" && labels.last == "Nov 30", "\(labels)")
        #expect(svg.contains("class=\"zero\"") && chart.scale.low < 0, "refunds go below a drawn zero line")
        #expect(chart.html.text.contains("<figure class=\"chart-figure\" id=\"sales\"><figcaption>Sales by day (USD)"))
    }

    @Test("at most six category labels, the first and the last always, in order, no two closer than the step")
    func categoryLabels() {
        #expect(Chart.labelled(30) == [0, 6, 12, 18, 29] && Chart.labelled(14) == [0, 3, 6, 9, 13])
        #expect(Chart.labelled(5) == [0, 1, 2, 3, 4] && Chart.labelled(0) == [])
        for count in 1...400 {
            let labelled = Chart.labelled(count)
            #expect(labelled.count <= 6 && labelled.first == 0 && labelled.last == count - 1, "\(count)")
            #expect(zip(labelled, labelled.dropFirst()).allSatisfy { $0 < $1 }, "\(count)")
            let gaps = zip(labelled, labelled.dropFirst()).map { $1 - $0 }
            #expect(gaps.allSatisfy { $0 >= (gaps.first ?? 0) }, "\(count): \(gaps)")
        }
    }

    @Test("every value in the table is a value drawn, and the other way round, for every kind")
    func tableHoldsThePlottedValues() {
        for kind in [ChartKind.line, .bar, .stackedBar] {
            for count in 1...3 {
                let chart = Self.days(kind, series: count)
                let table = Self.tabled(chart.table)
                #expect(Self.drawn(chart.svg).sorted() == table.map(\.value).sorted(), "\(kind) \(count)")
                #expect(table.map(\.value).sorted() == chart.plotted().flatMap { $0 }.sorted())
                #expect(table.allSatisfy { $0.text == ChartUnit.cents.text($0.value) })
            }
        }
        let short = Self.chart(
            .bar, ["a", "b", "c"], [.init(name: "x", values: [1, 2]), .init(name: "y", values: [3, 4, 5, 6])])
        #expect(
            short.plotted() == [[1, 2], [3, 4, 5]], "a short series stops; values past the categories are dropped")
        #expect(
            Self.drawn(short.svg).sorted() == [1, 2, 3, 4, 5] && short.table.text.contains("<td class=\"num\"></td>"))
    }

    @Test("nothing to draw: no drawing, no table, the figure says there is no data")
    func empty() {
        for chart in [
            Self.chart(.line, [], []), Self.chart(.bar, ["a"], []),
            Self.chart(.stackedBar, [], [.init(name: "x", values: [1])]),
            Self.chart(.line, ["a"], [.init(name: "x", values: [])]),
        ] {
            #expect(chart.svg == .empty && chart.table == .empty && chart.summary == "No data for this period.")
            #expect(chart.html.text.contains("<p class=\"empty\">No data for this period.</p>"))
        }
    }

    @Test("one value is still seen: a dot in a line chart, a bar in a bar chart; zeros draw a 0-to-1 axis")
    func singlePoint() {
        let line = Self.chart(.line, ["Nov 1"], [.init(name: "Orders", values: [4])])
        #expect(line.svg.text.contains("<circle class=\"dot series-1\" data-series=\"1\" data-value=\"4\""))
        #expect(line.summary == "1 entry, Nov 1; Orders 4.")
        let bar = Self.chart(.bar, ["Nov 1"], [.init(name: "Orders", values: [4])])
        let rect = Self.element("rect class=\"bar", with: "data-value=\"4\"", in: bar.svg)
        #expect((Self.number("height", in: rect ?? "") ?? 0) > 100)
        let zeros = Self.chart(.bar, ["a", "b"], [.init(name: "Orders", values: [0, 0])])
        #expect(zeros.scale.ticks == [0, 1] && Self.drawn(zeros.svg) == [0, 0])
    }

    @Test("a negative bar goes down from the zero line, a positive one up to it")
    func negativeBars() throws {
        let chart = Self.chart(.bar, ["Mon", "Tue"], [.init(name: "Net", values: [5, -3])])
        let zero = try #require(Self.element("line class=\"zero\"", with: "y1", in: chart.svg))
        let zeroY = try #require(Self.number("y1", in: zero))
        let down = try #require(Self.element("rect class=\"bar", with: "data-value=\"-3\"", in: chart.svg))
        let up = try #require(Self.element("rect class=\"bar", with: "data-value=\"5\"", in: chart.svg))
        let (downY, downHeight) = (Self.number("y", in: down) ?? 0, Self.number("height", in: down) ?? 0)
        let (upY, upHeight) = (Self.number("y", in: up) ?? 0, Self.number("height", in: up) ?? 0)
        #expect(downY == zeroY && downHeight > 0, "from the zero line down (SVG's y grows downward)")
        #expect(upY < zeroY && abs(upY + upHeight - zeroY) < 0.11, "up to the zero line")
        #expect(chart.scale.ticks == [-4, -2, 0, 2, 4, 6])
    }

    @Test("stacked bars: each series on the one below, to the total; a negative value makes grouped bars")
    func stackedBars() throws {
        let series: [ChartSeries] = [
            .init(name: "A", values: [2, 1]), .init(name: "B", values: [3, 0]), .init(name: "C", values: [5, 4]),
        ]
        let chart = Self.chart(.stackedBar, ["x", "y"], series)
        #expect(chart.drawnKind == .stackedBar && chart.scale.high == 10 && chart.svg.text.contains("chart-stacked"))
        let segments = chart.svg.text.split(separator: "<").filter {
            $0.hasPrefix("rect class=\"bar") && $0.contains("data-category=\"x\"")
        }
        let spans = segments.map { (Self.number("y", in: $0) ?? 0, Self.number("height", in: $0) ?? 0) }
        #expect(spans.count == 3)
        for (lower, upper) in zip(spans, spans.dropFirst()) {
            #expect(abs(upper.0 + upper.1 - lower.0) < 0.11, "touching")
        }
        #expect(spans.last.map { abs($0.0 - chart.scale.position(10, top: 20, bottom: 216)) < 0.11 } == true, "to 10")
        let negative = Self.chart(.stackedBar, ["x"], [.init(name: "A", values: [2]), .init(name: "B", values: [-1])])
        #expect(negative.drawnKind == .bar && negative.svg.text.contains("chart-bar"))
        #expect(Self.drawn(negative.svg).sorted() == [-1, 2] && negative.table.text.contains(">-1</td>"))
    }

    @Test("labels, names, titles and links are escaped in the drawing, the legend and the table")
    func hostileLabelsEscaped() {
        let chart = Chart(
            id: Self.hostile, title: Self.hostile, kind: .bar, unit: .count, xLabel: Self.hostile, yLabel: Self.hostile,
            categories: [ChartCategory(label: Self.hostile, href: "/x?a=\"><script>")],
            series: [.init(name: Self.hostile, values: [1]), .init(name: "B", values: [2])])
        for part in [chart.svg, chart.table, chart.legend, chart.html] {
            #expect(!part.text.contains("<script") && part.text.contains(Self.escaped))
        }
        #expect(chart.table.text.contains("<a href=\"/x?a=&quot;&gt;&lt;script&gt;\">\(Self.escaped)</a>"))
        #expect(chart.svg.text.contains("data-category=\"\(Self.escaped)\""))
    }

    @Test("links make the drawing a group of focusable links, each named by its category and values; none, an image")
    func linksAndRoles() {
        let linked = Self.days(.bar, linked: true)
        let svg = linked.svg.text
        #expect(svg.contains("role=\"group\"") && !svg.contains("role=\"img\""))
        #expect(
            svg.contains("<a href=\"/console/orders?day=3\" aria-label=\"Nov 3: Net sales $154.20; Refunds $0.00\">"))
        #expect(svg.contains("<rect class=\"bar series-1\" data-category=\"Nov 3\" data-series=\"1\""))
        #expect(
            svg.components(separatedBy: "<a href=").count == 31
                && svg.components(separatedBy: "class=\"hit\"").count == 31)
        let lines = Self.days(.line, linked: true).svg.text
        #expect(lines.contains("role=\"group\"") && lines.contains("<rect class=\"hit\" data-category=\"Nov 30\""))
        #expect(Self.days(.bar).svg.text.contains("role=\"img\"") && !Self.days(.bar).svg.text.contains("<a "))
        #expect(linked.table.text.contains("<th scope=\"row\"><a href=\"/console/orders?day=1\">Nov 1</a></th>"))
    }

    @Test("the legend appears with more than one series only, in the series' styles")
    func legend() {
        #expect(
            Self.days(.line, series: 1).legend == .empty
                && !Self.days(.bar, series: 1).html.text.contains("chart-legend"))
        let legend = Self.days(.stackedBar, series: 3).legend.text
        #expect(legend.hasPrefix("<ul class=\"chart-legend bars\">") && legend.contains("swatch series-3"))
        #expect(Self.days(.line).html.text.contains("<ul class=\"chart-legend lines\">"))
    }

    @Test("sparklines: nothing for no values, a dot for one, a flat middle line for equal values, named by label")
    func sparklines() {
        #expect(Sparkline(label: "Units by day", values: []).svg == .empty)
        let line = Sparkline(label: "Units by day", values: [0, 3, 14, 2]).svg.text
        #expect(
            line.contains("class=\"sparkline\"") && line.contains("role=\"img\" aria-label=\"Units by day, 0 to 14\""))
        #expect(line.contains("<polyline class=\"line\" points=\"3,21 34.3,"))
        #expect(Sparkline(label: "Units", values: [7]).svg.text.contains("<circle"))
        #expect(Sparkline(label: "Units", values: [7, 7, 7]).svg.text.contains("points=\"3,12 50,12 97,12\""))
        let hostile = Sparkline(label: Self.hostile, values: [1, 2]).svg.text
        #expect(!hostile.contains("<script") && hostile.contains(Self.escaped))
    }

    @Test("durations in words: every unit of an exact span, the largest unit of an age")
    func durations() {
        #expect(Durations.exact(seconds: 0, none: "no grace period") == "no grace period")
        #expect(Durations.exact(seconds: 7_200, none: "") == "2 hours")
        #expect(Durations.exact(seconds: 129_600, none: "") == "1 day 12 hours")
        #expect(Durations.exact(seconds: 5_400, none: "") == "1 hour 30 minutes")
        #expect(Durations.exact(seconds: 45, none: "") == "45 seconds")
        #expect(Durations.exact(seconds: 2_592_000, none: "") == "30 days")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(Durations.ago(now.addingTimeInterval(-30), now: now) == "just now")
        #expect(Durations.ago(now.addingTimeInterval(-3 * 3_600 - 59), now: now) == "3 hours ago")
        #expect(Durations.ago(now.addingTimeInterval(-86_400), now: now) == "1 day ago")
        #expect(Durations.words(seconds: 1_209_600) == "14 days")
    }
}

@Suite("Measured values written exactly")
struct ExactFiguresTests {
    @Test("scores and thresholds: whole values grouped, fractions kept, never scientific notation")
    func exact() {
        #expect(Figures.exact(33993) == "33,993")
        #expect(Figures.exact(1_234_567) == "1,234,567", "once 1.23457e+06")
        #expect(Figures.exact(1_234.5) == "1,234.5")
        #expect(Figures.exact(-0.25) == "-0.25")
        #expect(Figures.exact(0) == "0")
        #expect(Figures.exact(9_007_199_254_740_993) == "9,007,199,254,740,992", "the nearest Double, in full")
        #expect(Figures.exact(1_234.5, grouped: false) == "1234.5")
        #expect(Figures.exact(0.1234567, grouped: false) == "0.1234567", "a form's value reads back the same")
    }

    @Test("a leaderboard row, in the page and in the live stream, writes its score so")
    func leaderboardRow() throws {
        let entry = LeaderboardEntry(
            rank: 1, standing: .init(customerID: UUID(), score: 1_234_567, achievedAt: Date()), events: 3,
            reachedTarget: false, displayName: "Ada")
        #expect(LeaderboardRowView(entry).score == "1,234,567")
        #expect(try LeaderboardRowView.json([entry]).contains(#""score":"1,234,567""#))
    }

    @Test(
        """
        a chart's markup is kept by the chart's whole value: the same figures read the same markup, any change \
        draws anew; the oldest goes past the capacity
        """)
    func keptMarkup() {
        let kept = ChartMarkup(capacity: 2)
        let chart = ChartTests.chart(.bar, ["Mat", "Band"], [ChartSeries(name: "Units", values: [3, 5])])
        #expect(kept.markup(of: chart) == chart.drawnHTML)
        #expect(kept.markup(of: chart) == chart.drawnHTML)
        #expect(kept.count == 1, "drawn once, kept once")
        let changed = ChartTests.chart(.bar, ["Mat", "Band"], [ChartSeries(name: "Units", values: [3, 6])])
        #expect(kept.markup(of: changed) != kept.markup(of: chart), "one value changed: another drawing")
        #expect(kept.markup(of: changed).text.contains("data-value=\"6\""))
        let relabelled = ChartTests.chart(.bar, ["Mat", "Band <b>"], [ChartSeries(name: "Units", values: [3, 5])])
        #expect(kept.markup(of: relabelled).text.contains("Band &lt;b&gt;"), "a label is part of the key, escaped")
        #expect(kept.count == 2, "three charts drawn, two kept")
        #expect(chart.html == chart.drawnHTML, "the shared markup is the drawing")
    }
}
