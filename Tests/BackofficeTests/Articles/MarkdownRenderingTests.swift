import Foundation
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Markdown rendering on its own bounded pool", .serialized)
struct MarkdownRenderingTests {
    /// Holds its renders' threads until opened.
    final class Gate: Sendable {
        private let opened = Atomic<Bool>(false)
        func open() { opened.store(true, ordering: .relaxed) }

        /// A render that waits for the gate.
        var render: @Sendable () -> SafeMarkdown {
            { [self] in
                while !opened.load(ordering: .relaxed) { usleep(1000) }
                return SafeMarkdown("held")
            }
        }
    }

    @Test("a render answers with the sanitised HTML; a text past the longest save is refused before any work")
    func renderAndLimit() async throws {
        let rendered = try await MarkdownRendering.render("# Hi\n\n<script>alert(1)</script>")
        #expect(rendered.html == "<h1>Hi</h1>")
        let longest = String(repeating: "a", count: MarkdownRendering.maxLength)
        #expect(try await MarkdownRendering.render(longest).words == 1)
        do {
            _ = try await MarkdownRendering.render(longest + "é")
            Issue.record("a text past the limit was rendered")
        } catch DomainError.invalid(let issues) {
            #expect(issues.map(\.field) == ["body"] && issues.map(\.code) == ["too_long"])
        }
        #expect(
            try await MarkdownRendering.preview(String(repeating: "[", count: 250_000))["previewTooLong"] as? Bool
                == true)
        #expect(MarkdownRendering.pending == 0, "a refused text never took a place")
    }

    @Test("past the renders admitted at once the next is refused (503 rendering_busy) without waiting")
    func bounded() async throws {
        let gate = Gate()
        let held = gate.render
        let waiting = (0..<MarkdownRendering.admitted).map { _ in
            Task { try? await MarkdownRendering.run(held) }
        }
        for _ in 0..<200 where MarkdownRendering.pending < MarkdownRendering.admitted {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(MarkdownRendering.pending == MarkdownRendering.admitted)
        do {
            _ = try await MarkdownRendering.render("one too many")
            Issue.record("a render past the bound ran")
        } catch let problem as Problem {
            #expect(problem.code == "rendering_busy" && problem.status == 503 && problem.retryAfter != nil)
        }
        gate.open()
        for task in waiting { #expect(await task.value?.html == "<p>held</p>") }
        #expect(try await MarkdownRendering.render("back").html == "<p>back</p>", "served again once they end")
    }
}
