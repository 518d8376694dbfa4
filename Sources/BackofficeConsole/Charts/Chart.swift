import BackofficePlatform

/// One category on the x axis (a day, a good): its label, an optional link to the list behind it.
package struct ChartCategory: Sendable, Hashable {
    package let label: String
    package let href: String?

    package init(label: String, href: String? = nil) {
        self.label = label
        self.href = href
    }
}

/// One line, or one bar per category, of a chart: its name (the legend's and the table header's) and one
/// value per category, in the categories' order. Values past the last category are ignored; a series
/// shorter than the categories has no value for the last ones: nothing drawn, an empty table cell.
package struct ChartSeries: Sendable, Hashable {
    package let name: String
    package let values: [Int]

    package init(name: String, values: [Int]) {
        self.name = name
        self.values = values
    }
}

/// How a chart draws its series.
package enum ChartKind: Sendable, Hashable {
    /// One polyline per series (the second dashed, the third dotted); a series of one value is a dot.
    case line
    /// One bar per series in each category, side by side; negative values go down from the zero line.
    case bar
    /// The series stacked in each category, the first at the bottom. A stack can only show values that
    /// are not negative: a chart with a negative value is drawn as `bar` instead, so that every value
    /// drawn is the value in the table.
    case stackedBar
}

/// A chart written on the server as inline SVG, with its legend and the table of its values. Pure: no
/// I/O, no script, no inline style (classes only, for the page's CSP); every label, name and link is
/// interpolated into `HTML`, so escaped by construction.
///
/// The drawing is an image (`role="img"`, named by its title and `summary`) unless some category has a
/// link: then it is a group (`role="group"`) whose links, one per linked category, are named by their
/// category and values. The table under it holds exactly the values drawn: every mark carries its raw
/// value (`data-value` on bars and dots, `data-values` on a polyline, in category order) and every table
/// cell the same (`data-value`), both from `plotted()`.
package struct Chart: Sendable, Hashable {
    /// Unique on the page: the figure's id, and the prefix of the drawing's title and description ids.
    package let id: String
    /// E.g. "Sales by day (USD)".
    package let title: String
    package let kind: ChartKind
    package let unit: ChartUnit
    /// E.g. "Day (UTC)": under the x axis and atop the table's first column.
    package let xLabel: String
    /// E.g. "Net sales (USD)": along the y axis.
    package let yLabel: String
    package let categories: [ChartCategory]
    package let series: [ChartSeries]

    package init(
        id: String, title: String, kind: ChartKind, unit: ChartUnit, xLabel: String, yLabel: String,
        categories: [ChartCategory], series: [ChartSeries]
    ) {
        (self.id, self.title, self.kind, self.unit, self.xLabel, self.yLabel, self.categories, self.series) = (
            id, title, kind, unit, xLabel, yLabel, categories, series
        )
    }

    /// The sentence for a chart with nothing to draw.
    package static let noData = "No data for this period."

    /// The values drawn, series by series, one per category in order (a shorter series has fewer): what
    /// the marks carry and what the table shows.
    package func plotted() -> [[Int]] { series.map { Array($0.values.prefix(categories.count)) } }

    /// Whether there is a value to draw; without one, `svg` and `table` are empty and `html` says so.
    package var hasData: Bool { plotted().contains { !$0.isEmpty } }

    /// How the chart is drawn: as `kind`, except a stacked chart with a negative value, drawn as `.bar`.
    package var drawnKind: ChartKind {
        kind == .stackedBar && plotted().joined().contains { $0 < 0 } ? .bar : kind
    }

    /// The y axis: it encloses every value drawn (each stack's total for a stacked chart) and zero.
    package var scale: ChartScale {
        let values = plotted()
        guard drawnKind == .stackedBar else { return ChartScale(values: values.flatMap { $0 }, unit: unit) }
        let totals = categories.indices.map { Self.stackTop(values, at: $0, through: values.count) }
        return ChartScale(values: totals, unit: unit)
    }

    /// The top of category `index`'s stack of the first `count` series of `values` (negative values count
    /// as zero, and every sum stops at the scale's limit, so nothing overflows).
    package static func stackTop(_ values: [[Int]], at index: Int, through count: Int) -> Int {
        values.prefix(count).reduce(0) { total, values in
            index < values.count ? min(total + min(max(values[index], 0), ChartScale.limit), ChartScale.limit) : total
        }
    }

    /// One sentence for the drawing's `<desc>`: how many categories, from which to which, and each series'
    /// least and greatest value; "No data for this period." when there is nothing to draw.
    package var summary: String {
        guard hasData, let first = categories.first, let last = categories.last else { return Self.noData }
        let span =
            categories.count == 1
            ? "1 entry, \(first.label)" : "\(categories.count) entries from \(first.label) to \(last.label)"
        let ranges = zip(series, plotted()).compactMap { series, values -> String? in
            guard let least = values.min(), let most = values.max() else { return nil }
            return least == most
                ? "\(series.name) \(unit.text(least))"
                : "\(series.name) from \(unit.text(least)) to \(unit.text(most))"
        }
        return ([span] + ranges).joined(separator: "; ") + "."
    }

    /// The figure: the title as its caption, then the drawing, the legend (with more than one series) and
    /// the table; with nothing to draw, the caption and "No data for this period." only. Written once
    /// for each distinct chart while it stays among the recently drawn (`ChartMarkup`): a home shown
    /// again with the same figures reads its charts' markup instead of drawing them again.
    package var html: HTML { ChartMarkup.shared.markup(of: self) }

    /// `html`, drawn now.
    package var drawnHTML: HTML {
        guard hasData else {
            return """
                <figure class="chart-figure" id="\(id)"><figcaption>\(title)</figcaption>\
                <p class="empty">\(Self.noData)</p></figure>
                """
        }
        return """
            <figure class="chart-figure" id="\(id)"><figcaption>\(title)</figcaption>\(svg)\(legend)\(table)</figure>
            """
    }

    /// Each series' name by its swatch (a line sample, or a filled box for bars); nothing for one series.
    package var legend: HTML {
        guard series.count > 1 else { return .empty }
        let items = series.enumerated().map { index, series -> HTML in
            "<li><span class=\"swatch \(Self.seriesClass(index))\" aria-hidden=\"true\"></span>\(series.name)</li>"
        }
        let style = drawnKind == .line ? "lines" : "bars"
        return "<ul class=\"chart-legend \(style)\">\(HTML(joining: items))</ul>"
    }

    /// The values as a table, folded under "Data: {title}": a header row (the x label, each series' name),
    /// then one row per category (its label, a link when it has one) with each series' value in the unit
    /// (cells of class `num` carrying the raw value as `data-value`). Empty when there is nothing to draw.
    package var table: HTML {
        guard hasData else { return .empty }
        let values = plotted()
        let head = HTML(joining: series.map { "<th scope=\"col\" class=\"num\">\($0.name)</th>" })
        let rows = categories.indices.map { index in
            let category = categories[index]
            let label: HTML = category.href.map { "<a href=\"\($0)\">\(category.label)</a>" } ?? "\(category.label)"
            let cells = values.map { values -> HTML in
                guard index < values.count else { return "<td class=\"num\"></td>" }
                return "<td class=\"num\" data-value=\"\(values[index])\">\(unit.text(values[index]))</td>"
            }
            return "<tr><th scope=\"row\">\(label)</th>\(HTML(joining: cells))</tr>" as HTML
        }
        return """
            <details class="chart-data"><summary>Data: \(title)</summary><div class="table-wrap"><table>\
            <thead><tr><th scope="col">\(xLabel)</th>\(head)</tr></thead><tbody>\(HTML(joining: rows))</tbody>\
            </table></div></details>
            """
    }

    /// The accessible name of category `index`'s link: "{label}: {series} {value}; …".
    package func linkLabel(_ index: Int, plotted: [[Int]]? = nil) -> String {
        let values = zip(series, plotted ?? self.plotted()).compactMap { series, values in
            index < values.count ? "\(series.name) \(unit.text(values[index]))" : nil
        }
        return "\(categories[index].label): " + values.joined(separator: "; ")
    }

    /// The indices of the categories labelled under the x axis: all of up to six; else the first, then one
    /// every step (a fifth of the way to the last, rounded up) and the last, the one before the last dropped
    /// when it is less than a step from it. So at most six, in order, no two closer than a step.
    package static func labelled(_ count: Int) -> [Int] {
        guard count > 6 else { return Array(0..<count) }
        let step = (count - 1 + 4) / 5
        var indices = Array(stride(from: 0, to: count - 1, by: step))
        if let previous = indices.last, indices.count > 1, count - 1 - previous < step { indices.removeLast() }
        return indices + [count - 1]
    }

    /// The class that styles series `index` (from 0): `series-1` to `series-5`, repeating after five.
    package static func seriesClass(_ index: Int) -> String { "series-\(index % 5 + 1)" }

    /// The drawing: a 520 × 300 view box that scales to its container; empty when there is nothing to draw.
    package var svg: HTML {
        guard hasData else { return .empty }
        let drawing = ChartDrawing(chart: self)
        let role = categories.contains { $0.href != nil } ? "group" : "img"
        let kindClass =
            switch drawnKind {
            case .line: "chart-line"
            case .bar: "chart-bar"
            case .stackedBar: "chart-stacked"
            }
        return """
            <svg class="chart \(kindClass)" viewBox="0 0 \(Int(ChartDrawing.width)) \(Int(ChartDrawing.height))" \
            preserveAspectRatio="xMidYMid meet" role="\(role)" aria-labelledby="\(id)-title \(id)-desc">\
            <title id="\(id)-title">\(title)</title><desc id="\(id)-desc">\(summary)</desc>\
            \(drawing.axes)\(drawing.marks)</svg>
            """
    }
}

/// The geometry of one chart's drawing and its parts: the axes (grid, ticks, labels) and the marks.
private struct ChartDrawing {
    package static let (width, height) = (520.0, 300.0)
    /// Room around the plot: right, top, bottom; the left room fits the longest tick label.
    package static let (right, top, bottom) = (20.0, 20.0, 64.0)
    /// A character's width at the axes' 20px font, generously, to keep labels apart.
    package static let characterWidth = 11.5

    package let chart: Chart
    package let values: [[Int]]
    package let kind: ChartKind
    package let scale: ChartScale
    package let left: Double

    package init(chart: Chart) {
        self.chart = chart
        (values, kind, scale) = (chart.plotted(), chart.drawnKind, chart.scale)
        let longest = scale.ticks.map { chart.unit.tickText($0).count }.max() ?? 1
        left = 40 + Self.characterWidth * Double(longest)
    }

    package var baseline: Double { Self.height - Self.bottom }
    package var plotWidth: Double { Self.width - Self.right - left }
    /// Each category's share of the plot's width.
    package var band: Double { plotWidth / Double(max(chart.categories.count, 1)) }
    package func center(_ index: Int) -> Double { left + (Double(index) + 0.5) * band }
    package func y(_ value: Int) -> Double { scale.position(value, top: Self.top, bottom: baseline) }
    package func text(_ value: Double) -> String { Figures.coordinate(value) }

    /// Grid lines and labels at the ticks, some category labels, the axis labels; hidden from assistive
    /// technology (the title, summary, links and table say it all).
    package var axes: HTML {
        let (start, end) = (text(left), text(Self.width - Self.right))
        let grid = HTML(
            joining: scale.ticks.map { tick -> HTML in
                let at = y(tick)
                return """
                    <line class="grid" x1="\(start)" x2="\(end)" y1="\(text(at))" y2="\(text(at))"/>\
                    <text class="tick" x="\(text(left - 8))" y="\(text(at + 6))" \
                    text-anchor="end">\(chart.unit.tickText(tick))</text>
                    """
            })
        let middle = (Self.top + baseline) / 2
        let yLabel = Self.fitted(chart.yLabel, Int((baseline - Self.top) / Self.characterWidth))
        let xLabel = Self.fitted(chart.xLabel, Int(plotWidth / Self.characterWidth))
        return """
            <g class="axes" aria-hidden="true">\(grid)\(categoryLabels)\
            <text class="axis" transform="rotate(-90)" x="\(text(-middle))" y="22" \
            text-anchor="middle">\(yLabel)</text>\
            <text class="axis" x="\(text(left + plotWidth / 2))" y="\(text(Self.height - 10))" \
            text-anchor="middle">\(xLabel)</text></g>
            """
    }

    /// At most six category labels under the axis, the first and last always, the others evenly between;
    /// each cut short ("…") to the room between two labels, and kept inside the view box.
    package var categoryLabels: HTML {
        let indices = Chart.labelled(chart.categories.count)
        let gap = zip(indices, indices.dropFirst()).map { $1 - $0 }.min() ?? chart.categories.count
        let room = Int(band * Double(gap) / Self.characterWidth)
        return HTML(
            joining: indices.map { index -> HTML in
                let label = Self.fitted(chart.categories[index].label, max(room, 3))
                let half = Double(label.count) * Self.characterWidth / 2
                let x = min(max(center(index), half + 4), Self.width - half - 4)
                return """
                    <text class="tick" x="\(text(x))" y="\(text(baseline + 24))" text-anchor="middle">\(label)</text>
                    """
            })
    }

    /// `label` whole when it has at most `characters` characters, else its start and "…".
    package static func fitted(_ label: String, _ characters: Int) -> String {
        label.count <= characters ? label : String(label.prefix(max(characters - 1, 1))) + "…"
    }

    /// The lines (for a line chart), each category's bars or link, then the zero line over them.
    package var marks: HTML {
        let lines = kind == .line ? HTML(joining: values.indices.map(line)) : .empty
        let columns = HTML(joining: chart.categories.indices.map(column))
        let zero = text(y(0))
        return """
            <g class="marks">\(lines)\(columns)</g><line class="zero" x1="\(text(left))" \
            x2="\(text(Self.width - Self.right))" y1="\(zero)" y2="\(zero)"/>
            """
    }

    /// Series `series` as a polyline through its values, or a dot when it has one value.
    package func line(_ series: Int) -> HTML {
        let points = values[series]
        let style = Chart.seriesClass(series)
        guard points.count > 1 else {
            guard let only = points.first else { return .empty }
            return """
                <circle class="dot \(style)" data-series="\(series + 1)" data-value="\(only)" \
                cx="\(text(center(0)))" cy="\(text(y(only)))" r="5"/>
                """
        }
        let coordinates = points.enumerated().map { "\(text(center($0))),\(text(y($1)))" }.joined(separator: " ")
        return """
            <polyline class="line \(style)" data-series="\(series + 1)" \
            data-values="\(points.map(String.init).joined(separator: " "))" points="\(coordinates)"/>
            """
    }

    /// Category `index`'s bars (none in a line chart), inside its link with a transparent full-height
    /// target when the category has one.
    package func column(_ index: Int) -> HTML {
        let category = chart.categories[index]
        let bars = kind == .line ? HTML.empty : (kind == .stackedBar ? stacked(index) : grouped(index))
        guard let href = category.href else { return bars }
        return """
            <a href="\(href)" aria-label="\(chart.linkLabel(index, plotted: values))"><rect class="hit" \
            data-category="\(category.label)" x="\(text(left + Double(index) * band))" y="\(text(Self.top))" \
            width="\(text(band))" height="\(text(baseline - Self.top))"/>\(bars)</a>
            """
    }

    /// The series' bars side by side in category `index`, each from the zero line to its value.
    package func grouped(_ index: Int) -> HTML {
        let slot = band * 0.75 / Double(max(values.count, 1))
        let start = center(index) - slot * Double(values.count) / 2
        return HTML(
            joining: values.indices.filter { index < values[$0].count }.map { series in
                let value = values[series][index]
                let x = start + slot * Double(series)
                return bar(
                    series, index, x: x, width: slot > 4 ? slot - 1 : slot, from: y(max(value, 0)), to: y(min(value, 0))
                )
            })
    }

    /// The series' bars stacked in category `index`, the first at the bottom.
    package func stacked(_ index: Int) -> HTML {
        let width = band * 0.7
        return HTML(
            joining: values.indices.filter { index < values[$0].count }.map { series in
                let (below, top) = (
                    Chart.stackTop(values, at: index, through: series),
                    Chart.stackTop(values, at: index, through: series + 1)
                )
                return bar(series, index, x: center(index) - width / 2, width: width, from: y(top), to: y(below))
            })
    }

    /// One bar of series `series` in category `index`, from `top` down to `bottom`, carrying its raw value.
    package func bar(_ series: Int, _ index: Int, x: Double, width: Double, from top: Double, to bottom: Double) -> HTML
    {
        """
        <rect class="bar \(Chart.seriesClass(series))" data-category="\(chart.categories[index].label)" \
        data-series="\(series + 1)" data-value="\(values[series][index])" x="\(text(x))" y="\(text(top))" \
        width="\(text(width))" height="\(text(bottom - top))"/>
        """
    }
}
