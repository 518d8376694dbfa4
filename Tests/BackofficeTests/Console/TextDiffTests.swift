import Testing

@testable import Backoffice

@Suite("Line diffs of two versions")
struct TextDiffTests {
    @Test("lines kept, removed and added in reading order, whatever the line ends (CRLF is one Swift character)")
    func lineEnds() {
        for end in ["\n", "\r\n", "\r"] {
            let (old, new) = (["a", "b", "c"].joined(separator: end), ["a", "x", "c"].joined(separator: end))
            let diff = TextDiff.lines(from: old, to: new)
            #expect(diff.map(\.change) == ["same", "removed", "added", "same"], "with \(end.debugDescription)")
            #expect(diff.map(\.text) == ["a", "b", "x", "c"])
        }
        #expect(TextDiff.lines(from: "", to: "").map(\.change) == ["same"])
    }
}
