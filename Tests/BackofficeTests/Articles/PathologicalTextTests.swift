import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// Every algorithm a writer's text drives (the Markdown renderer, the sanitiser, the word count, the
/// line diff) against the inputs that break such algorithms: nesting, brackets, emphasis runs, long
/// lines, 100,000 lines. Each must answer within a bound of work: at the longest text a save takes,
/// under two seconds of its thread's CPU time (the slowest shape, "- " × n, takes 0.8 s alone and
/// took 1.03 s beside the whole suite: a busy machine's shared caches stretch CPU time too), and
/// linear — four times the text at most about four times the time (a quadratic algorithm takes
/// sixteen times as long; the first renderer took 2^n).
@Suite("Pathological texts: every renderer and diff bounded")
struct PathologicalTextTests {
    /// A text of about `length` scalars made by repeating `unit` (then `tail`).
    struct Shape: CustomStringConvertible, Sendable {
        let description: String
        let make: @Sendable (Int) -> String

        init(_ name: String, _ make: @escaping @Sendable (Int) -> String) {
            description = name
            self.make = make
        }

        /// `unit` repeated to about `length` scalars, then `tail`.
        static func repeated(_ unit: String, tail: String = "") -> Shape {
            Shape("\(unit.debugDescription) × n\(tail.isEmpty ? "" : " + \(tail.debugDescription)")") { length in
                String(repeating: unit, count: max(1, (length - tail.count) / unit.count)) + tail
            }
        }
    }

    static let markdown: [Shape] = [
        .repeated("["), .repeated("[a"), .repeated("a]"), .repeated("!["), .repeated("![[]()"), .repeated("[ (]("),
        .repeated("[a](<b"), .repeated("[a](b"), .repeated("[ a_"), .repeated("*a_ "), .repeated("*_*_"),
        .repeated("_a "), .repeated("a_ "), .repeated("a**b c* "), .repeated("*a **a "), .repeated("~~a "),
        .repeated("> ", tail: "a"), .repeated("- ", tail: "a"), .repeated("1. ", tail: "a"),
        .repeated("> - ", tail: "a"),
        .repeated("<!--"), .repeated("<a "), .repeated("</x"), .repeated("<em>"), .repeated("&#"), .repeated("&amp"),
        .repeated("www.a."), .repeated("a@"), .repeated("`"), .repeated("|"), .repeated("| a |\n"),
        .repeated("a\n"), .repeated("\n"), .repeated("a"), .repeated("    a\n"), .repeated("```\n"),
        Shape("nested brackets [ⁿ a ]ⁿ") {
            String(repeating: "[", count: $0 / 2) + "a" + String(repeating: "]", count: $0 / 2)
        },
        Shape("nested emphasis") {
            String(repeating: "*a **a ", count: $0 / 14) + "b" + String(repeating: " a** a*", count: $0 / 14)
        },
        Shape("a wide table's header, then rows") { length in
            let columns = length / 8
            return String(repeating: "|a", count: columns) + "\n" + String(repeating: "|-", count: columns) + "\n"
                + String(repeating: "a\n", count: length / 4)
        },
        Shape("backtick runs of every length") { length in
            var text = ""
            var run = 1
            while text.utf8.count + run < length {
                text += "e" + String(repeating: "`", count: run)
                run += 1
            }
            return text
        },
        Shape("nested list items") { length in
            var text = ""
            var depth = 0
            while text.utf8.count + depth * 2 < length {
                text += String(repeating: "  ", count: depth) + "* a\n"
                depth += 1
            }
            return text
        },
    ]

    /// HTML given to the sanitiser directly (Markdown passes raw HTML on to it).
    static let html: [Shape] = [
        Shape("open elements, then stray end tags") {
            String(repeating: "<em>", count: $0 / 8) + String(repeating: "</p>", count: $0 / 8)
        },
        .repeated("<a "), .repeated("<a b="), .repeated("<p"), .repeated("<!"), .repeated("<!--"), .repeated("</"),
        .repeated("&"), .repeated("&#x"), .repeated("<script>"), .repeated("<a href=\"&#"), .repeated("<b>x</b>"),
    ]

    /// The CPU time this thread spends in `work`: what the machine's other load does not change.
    static func cpuTime(_ work: () -> Void) -> Duration {
        func now() -> Duration {
            var spec = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
            return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
        }
        let start = now()
        work()
        return now() - start
    }

    /// The fastest of two runs of `work` on `text`.
    static func time(_ text: String, _ work: (String) -> Void) -> Duration {
        min(cpuTime { work(text) }, cpuTime { work(text) })
    }

    /// Asserts `work` is bounded on `shape`: under `ceiling` at `length` and at most about linear.
    static func expectBounded(_ shape: Shape, length: Int, ceiling: Duration, _ work: (String) -> Void) {
        let full = shape.make(length)
        let quarter = shape.make(length / 4)
        let fullTime = time(full, work)
        let quarterTime = time(quarter, work)
        #expect(fullTime < ceiling, "\(shape): \(full.unicodeScalars.count) scalars took \(fullTime)")
        // Below 50 ms the ratio is mostly noise; above it, four times the text takes four times the
        // work when it is linear and sixteen times when it is quadratic (8: room for a loaded machine).
        if fullTime > .milliseconds(50) {
            let ratio = fullTime / max(quarterTime, .microseconds(1))
            #expect(
                ratio < 8, "\(shape): four times the text took \(ratio)× the time (\(quarterTime) → \(fullTime))")
        }
    }

    @Test("Markdown to sanitised HTML, with its word count", arguments: markdown)
    func rendering(_ shape: Shape) {
        Self.expectBounded(shape, length: MarkdownRendering.maxLength, ceiling: .seconds(2)) { _ = SafeMarkdown($0) }
    }

    @Test("the sanitiser on raw HTML", arguments: html)
    func sanitising(_ shape: Shape) {
        Self.expectBounded(shape, length: MarkdownRendering.maxLength, ceiling: .seconds(2)) {
            _ = HTMLSanitizer.sanitize($0)
        }
    }

    @Test("the word count on sanitised text", arguments: ["a ", "&", "<", "a'", "-a", "&#1;"])
    func words(_ unit: String) {
        Self.expectBounded(.repeated(unit), length: MarkdownRendering.maxLength, ceiling: .seconds(2)) {
            _ = SafeMarkdown.countWords(SafeMarkdown.visibleText($0))
        }
    }

    @Test("the line diff: every shape against itself edited, reversed and replaced; work within the budget")
    func diffs() {
        let lines: [Shape] = [
            .repeated("a\n"), .repeated("\n"), .repeated("ab\nba\n"), .repeated("x\ny\nz\n"),
            Shape("numbered lines") { (0..<$0 / 7).map { "l\($0)" }.joined(separator: "\n") },
            Shape("one long line") { String(repeating: "a", count: $0) },
        ]
        for shape in lines {
            let text = shape.make(200_000)
            let count = text.split(separator: "\n", omittingEmptySubsequences: false).count
            let pairs: [(String, String)] = [
                (text, text), (text, "changed\n" + text), (text, String(text.reversed())),
                (text, text.replacingOccurrences(of: "a", with: "b")), (text, ""), ("", text),
            ]
            for (old, new) in pairs {
                var diff: TextDiff?
                // The faster of two runs: a loaded machine's shared caches stretch one run's CPU time.
                let spent = min(
                    Self.cpuTime { diff = TextDiff(from: old, to: new) },
                    Self.cpuTime { diff = TextDiff(from: old, to: new) })
                #expect(spent < .seconds(3), "\(shape), \(count) lines: \(spent)")
                #expect(diff!.work <= TextDiff.budget + 2 * count + 2, "\(shape): work \(diff!.work)")
            }
        }
    }

    @Test("a text past the table budget reads its tables as text; one past the image budget its images")
    func budgets() {
        #expect(CommonMark.reading(of: "|a|b|\n|-|-|\n|1|2|") == .init(tables: true, images: true))
        let wide =
            String(repeating: "|a", count: 2_000) + "\n" + String(repeating: "|-", count: 2_000) + "\n"
            + String(repeating: "a\n", count: 200)
        #expect(!CommonMark.reading(of: wide).tables)
        #expect(!SafeMarkdown(wide).html.contains("<table"), "read as text: no table of 400,000 cells")
        #expect(SafeMarkdown("|a|b|\n|-|-|\n|1|2|").html.contains("<td>2</td>"))
        let images = String(repeating: "![[]()", count: CommonMark.imageOpeners + 1)
        #expect(!CommonMark.reading(of: images).images)
        #expect(SafeMarkdown(String(repeating: "![a](https://x.example/a.png) ", count: 3)).html.contains("<img"))
        #expect(!SafeMarkdown(images).html.contains("<img"))
    }
}
