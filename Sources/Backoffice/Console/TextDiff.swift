import Foundation

/// A line-by-line diff of two texts (Swift's `CollectionDifference`), as a page shows two versions:
/// each line kept, removed or added, in reading order.
enum TextDiff {
    struct Line {
        let text: String
        let change: String  // "same", "removed" or "added"
        let sign: String
    }

    static func lines(from old: String, to new: String) -> [Line] {
        // By line ends of any kind: Swift reads CRLF as one character, which "\n" alone never splits.
        func lines(_ text: String) -> [String] {
            text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        }
        let before = lines(old)
        let after = lines(new)
        let difference = after.difference(from: before)
        var removed = Set<Int>()
        var inserted = Set<Int>()
        for change in difference {
            switch change {
            case .remove(let offset, _, _): removed.insert(offset)
            case .insert(let offset, _, _): inserted.insert(offset)
            }
        }
        var result: [Line] = []
        var (i, j) = (0, 0)
        while i < before.count || j < after.count {
            if i < before.count, removed.contains(i) {
                result.append(Line(text: before[i], change: "removed", sign: "−"))
                i += 1
            } else if j < after.count, inserted.contains(j) {
                result.append(Line(text: after[j], change: "added", sign: "+"))
                j += 1
            } else {
                if j < after.count { result.append(Line(text: after[j], change: "same", sign: " ")) }
                i += 1
                j += 1
            }
        }
        return result
    }
}
