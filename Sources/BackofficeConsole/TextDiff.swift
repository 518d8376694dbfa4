import BackofficePlatform

/// A line-by-line diff of two texts, as a page shows two versions: each line kept, removed or added,
/// in reading order.
///
/// Guarantees, whatever the texts:
/// - the work is bounded: Myers' O((N+M)·D) algorithm in its linear-space form (the middle snake,
///   diff-match-patch's bisection), with every step it takes counted against `budget`; past it the
///   diff is "the whole text changed" (every old line removed, every new one added) and
///   `isLineByLine` is false, which the page says;
/// - memory is linear in the number of lines (lines are compared as numbers, each distinct line
///   read once into a table);
/// - no recursion: the pieces still to compare wait on an explicit stack;
/// - two texts that share no line but their common first and last ones (a rewrite) are compared in
///   one pass over their lines, counted as work and taken only when the budget holds it, rather
///   than by a search that spends the budget.
package struct TextDiff {
    package struct Line {
        package let text: String
        package let change: String  // "same", "removed" or "added"
        package let sign: String
    }

    /// Steps (diagonals tried plus lines followed along a snake) a diff may take: a few tens of
    /// milliseconds of one core; two versions of 100,000 lines with a few hundred changes fit.
    package static let budget = 20_000_000

    /// The lines in reading order.
    package let lines: [Line]
    /// False when the texts differed past the budget and the diff shows the whole text changed.
    package let isLineByLine: Bool
    /// The steps taken (at most `budget` + one round of the search: a step per diagonal, and the
    /// lines followed along them).
    package let work: Int

    /// What the `diff` partial shows.
    package var values: [String: Any] { ["lines": lines, "whole": !isLineByLine] }

    package init(from old: String, to new: String, budget: Int = TextDiff.budget) {
        // By line ends of any kind: Swift reads CRLF as one character, which "\n" alone never splits.
        func split(_ text: String) -> [Substring] {
            text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        }
        let before = split(old)
        let after = split(new)
        var numbers: [Substring: Int] = [:]
        func number(_ line: Substring) -> Int {
            if let known = numbers[line] { return known }
            numbers[line] = numbers.count
            return numbers.count - 1
        }
        let a = before.map(number)
        let b = after.map(number)
        var search = Search(a: a, b: b, distinct: numbers.count, budget: budget)
        let edits = search.run()
        work = search.work
        isLineByLine = edits != nil
        var result: [Line] = []
        result.reserveCapacity(a.count + b.count)
        if let edits {
            var (i, j) = (0, 0)
            while i < a.count || j < b.count {
                if i < a.count, edits.removed[i] {
                    result.append(Line(text: String(before[i]), change: "removed", sign: "−"))
                    i += 1
                } else if j < b.count, edits.added[j] {
                    result.append(Line(text: String(after[j]), change: "added", sign: "+"))
                    j += 1
                } else {
                    result.append(Line(text: String(after[j]), change: "same", sign: " "))
                    i += 1
                    j += 1
                }
            }
        } else {
            result += before.map { Line(text: String($0), change: "removed", sign: "−") }
            result += after.map { Line(text: String($0), change: "added", sign: "+") }
        }
        lines = result
    }

    /// The lines removed from `a` and added in `b`, nil when the budget ran out.
    private struct Search {
        package let a: [Int]
        package let b: [Int]
        package let budget: Int
        /// How many distinct lines the two texts hold: the numbers in `a` and `b` are below it.
        package let distinct: Int
        private(set) var work = 0
        private var removed: [Bool]
        private var added: [Bool]

        package init(a: [Int], b: [Int], distinct: Int, budget: Int) {
            self.a = a
            self.b = b
            self.distinct = distinct
            self.budget = budget
            removed = Array(repeating: false, count: a.count)
            added = Array(repeating: false, count: b.count)
        }

        /// A piece still to compare: `a[aLow..<aHigh]` against `b[bLow..<bHigh]`.
        private struct Piece {
            package var aLow: Int, aHigh: Int, bLow: Int, bHigh: Int
        }

        package mutating func run() -> (removed: [Bool], added: [Bool])? {
            var pieces = [Piece(aLow: 0, aHigh: a.count, bLow: 0, bHigh: b.count)]
            var first = true
            while var piece = pieces.popLast() {
                // Common lines at both ends are kept as they are.
                while piece.aLow < piece.aHigh, piece.bLow < piece.bHigh, a[piece.aLow] == b[piece.bLow] {
                    piece.aLow += 1
                    piece.bLow += 1
                }
                while piece.aLow < piece.aHigh, piece.bLow < piece.bHigh, a[piece.aHigh - 1] == b[piece.bHigh - 1] {
                    piece.aHigh -= 1
                    piece.bHigh -= 1
                }
                work += 1
                let whole = first && piece.aHigh - piece.aLow + piece.bHigh - piece.bLow <= budget - work
                first = false
                if piece.aLow == piece.aHigh || piece.bLow == piece.bHigh || (whole && sharesNoLine(piece)) {
                    for i in piece.aLow..<piece.aHigh { removed[i] = true }
                    for j in piece.bLow..<piece.bHigh { added[j] = true }
                    continue
                }
                switch middle(of: piece) {
                case .outOfBudget: return nil
                case .split(let x, let y)
                where (x, y) != (piece.aLow, piece.bLow) && (x, y) != (piece.aHigh, piece.bHigh):
                    pieces.append(Piece(aLow: x, aHigh: piece.aHigh, bLow: y, bHigh: piece.bHigh))
                    pieces.append(Piece(aLow: piece.aLow, aHigh: x, bLow: piece.bLow, bHigh: y))
                case .split, .disjoint:
                    // No line in common (a split at a corner would not make the piece smaller: never
                    // seen, but the loop must end whatever happens).
                    for i in piece.aLow..<piece.aHigh { removed[i] = true }
                    for j in piece.bLow..<piece.bHigh { added[j] = true }
                }
            }
            return (removed, added)
        }

        /// Whether the two sides of `piece` have no line in common: one pass over each, counted as work.
        private mutating func sharesNoLine(_ piece: Piece) -> Bool {
            var inOld = [Bool](repeating: false, count: distinct)
            for i in piece.aLow..<piece.aHigh { inOld[a[i]] = true }
            work += piece.aHigh - piece.aLow
            for j in piece.bLow..<piece.bHigh {
                work += 1
                if inOld[b[j]] { return false }
            }
            return true
        }

        private enum Middle {
            /// Where a shortest edit path crosses the middle: both halves are then compared on their own.
            case split(Int, Int)
            /// The two share no line.
            case disjoint
            case outOfBudget
        }

        /// Where a shortest edit path of `piece` crosses its middle: paths grow from both corners,
        /// one edit more each round, until they overlap.
        private mutating func middle(of piece: Piece) -> Middle {
            var paths = Paths(n: piece.aHigh - piece.aLow, m: piece.bHigh - piece.bLow)
            let (a, b) = (a, b)
            for d in 0..<paths.maxD {
                if let (x, y) = paths.forward(d, work: &work, same: { a[piece.aLow + $0] == b[piece.bLow + $1] }) {
                    return .split(piece.aLow + x, piece.bLow + y)
                }
                if let (x, y) = paths.backward(
                    d, work: &work, same: { a[piece.aHigh - $0 - 1] == b[piece.bHigh - $1 - 1] })
                {
                    return .split(piece.aLow + x, piece.bLow + y)
                }
                if work > budget { return .outOfBudget }
            }
            return .disjoint
        }
    }

    /// The furthest-reaching paths of one piece (`n` by `m` lines) from its start (`ahead`, by
    /// diagonal) and from its end (`behind`, in reversed coordinates).
    private struct Paths {
        package let n: Int, m: Int
        package let maxD: Int
        private let offset: Int
        private let delta: Int
        private var ahead: Frontier
        private var behind: Frontier

        package init(n: Int, m: Int) {
            (self.n, self.m) = (n, m)
            maxD = (n + m + 1) / 2
            offset = maxD
            delta = n - m
            ahead = Frontier(offset: offset, count: 2 * maxD + 2)
            behind = ahead
        }

        /// Extends every forward path by one edit (`d` edits in all), following equal lines; the
        /// middle point when a path meets a backward one (only possible when `n - m` is odd).
        package mutating func forward(_ d: Int, work: inout Int, same: (Int, Int) -> Bool) -> (Int, Int)? {
            let (behind, offset, delta, n) = (behind.reach, offset, delta, n)
            return ahead.extend(d, n: n, m: m, work: &work, same: same) { k, x, y in
                let other = offset + delta - k
                guard delta % 2 != 0, other >= 0, other < behind.count, behind[other] != -1, x >= n - behind[other]
                else { return nil }
                return (x, y)
            }
        }

        /// Extends every backward path by one edit; the middle point when one meets a forward path
        /// (only possible when `n - m` is even).
        package mutating func backward(_ d: Int, work: inout Int, same: (Int, Int) -> Bool) -> (Int, Int)? {
            let (ahead, offset, delta, n) = (ahead.reach, offset, delta, n)
            return behind.extend(d, n: n, m: m, work: &work, same: same) { k, x, _ in
                let other = offset + delta - k
                guard delta % 2 == 0, other >= 0, other < ahead.count, ahead[other] != -1, ahead[other] >= n - x
                else { return nil }
                return (ahead[other], offset + ahead[other] - other)
            }
        }
    }

    /// The paths of one direction: how far each diagonal reaches, and the diagonals still inside.
    private struct Frontier {
        package let offset: Int
        private(set) var reach: [Int]
        private var (kStart, kEnd) = (0, 0)

        package init(offset: Int, count: Int) {
            self.offset = offset
            reach = [Int](repeating: -1, count: count)
            reach[offset + 1] = 0
        }

        /// Extends every path by one edit (`d` in all), following lines `same` says are equal; what
        /// `meets` answers for the first diagonal whose path, still inside the piece, meets the
        /// other direction's.
        package mutating func extend(
            _ d: Int, n: Int, m: Int, work: inout Int, same: (Int, Int) -> Bool,
            meets: (_ k: Int, _ x: Int, _ y: Int) -> (Int, Int)?
        ) -> (Int, Int)? {
            var k = -d + kStart
            while k <= d - kEnd {
                work += 1
                let index = offset + k
                var x =
                    k == -d || (k != d && reach[index - 1] < reach[index + 1]) ? reach[index + 1] : reach[index - 1] + 1
                var y = x - k
                while x < n, y < m, same(x, y) {
                    (x, y) = (x + 1, y + 1)
                    work += 1
                }
                reach[index] = x
                if x > n {
                    kEnd += 2
                } else if y > m {
                    kStart += 2
                } else if let middle = meets(k, x, y) {
                    return middle
                }
                k += 2
            }
            return nil
        }
    }
}
