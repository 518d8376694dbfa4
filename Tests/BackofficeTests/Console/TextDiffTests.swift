import Testing

@testable import Backoffice

@Suite("Line diffs of two versions")
struct TextDiffTests {
    @Test("lines kept, removed and added in reading order, whatever the line ends (CRLF is one Swift character)")
    func lineEnds() {
        for end in ["\n", "\r\n", "\r"] {
            let diff = TextDiff.lines(from: ["a", "b", "c"].joined(separator: end), to: ["a", "x", "c"].joined(separator: end))
            #expect(diff.map(\.change) == ["same", "removed", "added", "same"], "with \(end.debugDescription)")
            #expect(diff.map(\.text) == ["a", "b", "x", "c"])
        }
        #expect(TextDiff.lines(from: "", to: "").map(\.change) == ["same"])
    }
}
