import Synchronization

/// The markup of the charts drawn recently, by the chart itself (its title, categories, links and
/// values: everything drawn): a chart equal to one drawn before is not drawn again. Homes show the
/// same figures to every reload until an order, an event or a day changes them, and drawing a
/// chart was a fifth of a home's server time (docs/benchmarks.md).
///
/// Holds at most `capacity` charts (some 20–60 KB each); past it the oldest drawn is dropped first.
/// Safe from any thread; a chart drawn twice at once is drawn twice, kept once.
package final class ChartMarkup: Sendable {
    package static let shared = ChartMarkup(capacity: 256)

    package let capacity: Int
    private let kept = Mutex<(markup: [Chart: HTML], order: [Chart], next: Int)>(([:], [], 0))

    package init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// `chart`'s markup: kept, or drawn now and kept.
    package func markup(of chart: Chart) -> HTML {
        if let markup = kept.withLock({ $0.markup[chart] }) { return markup }
        let markup = chart.drawnHTML
        kept.withLock { kept in
            guard kept.markup.updateValue(markup, forKey: chart) == nil else { return }
            if kept.order.count < capacity {
                kept.order.append(chart)
            } else {
                kept.markup[kept.order[kept.next]] = nil
                kept.order[kept.next] = chart
                kept.next = (kept.next + 1) % capacity
            }
        }
        return markup
    }

    /// How many charts are kept (for tests).
    package var count: Int { kept.withLock { $0.markup.count } }
}
