import BackofficePlatform

/// A tiny line of values for a table cell or a card (a good's units by day), written on the server as
/// inline SVG: an image (`role="img"`) named by `label` and the least and greatest value, so a screen
/// reader hears "Units by day, 0 to 14". It shows the shape only: its axis runs from the least value to
/// the greatest, not from zero. Pure; `label` is escaped by construction.
package struct Sparkline: Sendable {
    package let label: String
    package let values: [Int]

    package init(label: String, values: [Int]) {
        self.label = label
        self.values = values
    }

    /// The view box's size; the drawing keeps a margin of `inset` so the stroke and the dot are not cut.
    package static let (width, height, inset) = (100.0, 24.0, 3.0)

    /// Nothing without values; a dot in the middle for one value; a flat line across the middle when all
    /// values are equal; else a line from the first value (left) to the last (right).
    package var svg: HTML {
        guard let least = values.min(), let most = values.max() else { return .empty }
        let name = least == most ? "\(label), \(Figures.grouped(least))" : "\(label), \(range(least, most))"
        let open: HTML = """
            <svg class="sparkline" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" \
            preserveAspectRatio="xMidYMid meet" role="img" aria-label="\(name)">
            """
        guard values.count > 1 else {
            return "\(open)<circle class=\"dot\" cx=\"50\" cy=\"12\" r=\"3\"/></svg>"
        }
        let run = Self.width - 2 * Self.inset
        let rise = Self.height - 2 * Self.inset
        let points = values.enumerated().map { index, value in
            let x = Self.inset + run * Double(index) / Double(values.count - 1)
            let share = most == least ? 0.5 : (Double(value) - Double(least)) / (Double(most) - Double(least))
            return "\(Figures.coordinate(x)),\(Figures.coordinate(Self.height - Self.inset - share * rise))"
        }
        return "\(open)<polyline class=\"line\" points=\"\(points.joined(separator: " "))\"/></svg>"
    }

    private func range(_ least: Int, _ most: Int) -> String {
        "\(Figures.grouped(least)) to \(Figures.grouped(most))"
    }
}
