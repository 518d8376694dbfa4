import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Line diffs of two versions")
struct TextDiffTests {
    @Test("lines kept, removed and added in reading order, whatever the line ends (CRLF is one Swift character)")
    func lineEnds() {
        for end in ["\n", "\r\n", "\r"] {
            let (old, new) = (["a", "b", "c"].joined(separator: end), ["a", "x", "c"].joined(separator: end))
            let diff = TextDiff(from: old, to: new)
            #expect(diff.lines.map(\.change) == ["same", "removed", "added", "same"], "with \(end.debugDescription)")
            #expect(diff.lines.map(\.text) == ["a", "b", "x", "c"])
            #expect(diff.isLineByLine)
        }
        #expect(TextDiff(from: "", to: "").lines.map(\.change) == ["same"])
    }

    /// The old text is the kept and removed lines in order, the new one the kept and added lines.
    static func reproduces(_ diff: TextDiff, _ old: [String], _ new: [String]) -> Bool {
        diff.lines.filter { $0.change != "added" }.map(\.text) == old
            && diff.lines.filter { $0.change != "removed" }.map(\.text) == new
    }

    /// The length of a longest common subsequence, by the textbook table (small inputs only).
    static func lcs(_ a: [String], _ b: [String]) -> Int {
        var row = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var diagonal = 0
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = x == y ? diagonal + 1 : max(row[j + 1], row[j])
                diagonal = above
            }
        }
        return row[b.count]
    }

    @Test("property: 2,000 random pairs — each diff reproduces both texts and keeps a longest common part")
    func shortestAndFaithful() {
        var generator = SplitMix64(seed: 0xD1FF)
        for round in 0..<2_000 {
            let alphabet = ["a", "b", "c", "d", ""]
            let old = (0..<Int.random(in: 0...30, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            let new = (0..<Int.random(in: 0...30, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            let diff = TextDiff(from: old.joined(separator: "\n"), to: new.joined(separator: "\n"))
            let (oldLines, newLines) = (old.isEmpty ? [""] : old, new.isEmpty ? [""] : new)
            #expect(Self.reproduces(diff, oldLines, newLines), "round \(round)")
            #expect(
                diff.lines.filter { $0.change == "same" }.count == Self.lcs(oldLines, newLines),
                "round \(round): not a shortest diff of \(old) → \(new)")
            if !Self.reproduces(diff, oldLines, newLines) { return }
        }
    }

    @Test(
        """
        past its budget a diff shows the whole text changed, having done no more than the budget's work; \
        two texts sharing no line are line by line after one pass
        """)
    func budget() {
        // The shape that took 263 s: two versions of 49,990 lines, every line different.
        let old = (0..<49_990).map { "old line \($0)" }
        let new = (0..<49_990).map { "new line \($0)" }
        let diff = TextDiff(from: old.joined(separator: "\n"), to: new.joined(separator: "\n"))
        #expect(diff.lines.count == 99_980 && Self.reproduces(diff, old, new))
        // They share no line: a rewrite, shown line by line after one pass over each, with no search.
        #expect(diff.isLineByLine && diff.work <= 2 * 49_990 + 1, "work \(diff.work)")
        #expect(diff.lines.prefix(49_990).allSatisfy { $0.change == "removed" })
        // One line in common in the middle: the search runs, and gives up by its budget.
        let shared = TextDiff(
            from: (old[..<100] + ["kept"] + old[100...]).joined(separator: "\n"),
            to: (new[..<200] + ["kept"] + new[200...]).joined(separator: "\n"), budget: 1_000_000)
        #expect(!shared.isLineByLine && shared.work <= 1_000_000 + 100_000, "work \(shared.work)")
        // Interleaved so nothing is common at the ends: the search must give up by its budget.
        let interleavedOld = (0..<50_000).map { $0 % 2 == 0 ? "same \($0)" : "old \($0)" }
        let interleavedNew = (0..<50_000).map { $0 % 3 == 0 ? "same \($0 - $0 % 2)" : "new \($0)" }
        let hard = TextDiff(
            from: interleavedOld.joined(separator: "\n"), to: interleavedNew.joined(separator: "\n"), budget: 1_000_000)
        #expect(!hard.isLineByLine && hard.work <= 1_000_000 + 100_000, "work \(hard.work)")
        #expect(Self.reproduces(hard, interleavedOld, interleavedNew))
        #expect(hard.lines.prefix(50_000).allSatisfy { $0.change == "removed" })
        // Within its budget, 100,000 lines with a few changes are compared line by line.
        var edited = (0..<100_000).map { "line \($0)" }
        for index in stride(from: 7, to: 100_000, by: 997) { edited[index] = "changed \(index)" }
        let original = (0..<100_000).map { "line \($0)" }
        let few = TextDiff(from: original.joined(separator: "\n"), to: edited.joined(separator: "\n"))
        #expect(few.isLineByLine && Self.reproduces(few, original, edited))
        #expect(few.lines.filter { $0.change == "added" }.count == 101)
    }
}
