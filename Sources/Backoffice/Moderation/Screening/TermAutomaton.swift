import BackofficePlatform
/// One Aho–Corasick automaton over every term's letters (a–z, repeats collapsed): a text's runs
/// are walked once, whatever the number of terms, with one table lookup per run.
struct TermAutomaton: Sendable {
    private static let alphabet = 26
    /// `next[state * 26 + letter - 1]`: the full transition function (failures already folded in).
    private let next: [Int32]
    /// The terms ending at each state (through its suffixes too): `ends[endStart[s]..<endStart[s + 1]]`.
    private let endStart: [Int32]
    private let ends: [Int32]

    /// Builds the automaton for `words` (letters `1...26` each); a word's index is what `scan` reports.
    init(_ words: [[UInt8]]) {
        let width = Self.alphabet
        var next = [Int32](repeating: -1, count: width)
        var ends: [[Int32]] = [[]]
        for (index, word) in words.enumerated() {
            var state = 0
            for letter in word {
                let slot = state * width + Int(letter) - 1
                if next[slot] < 0 {
                    next[slot] = Int32(ends.count)
                    next += [Int32](repeating: -1, count: width)
                    ends.append([])
                }
                state = Int(next[slot])
            }
            ends[state].append(Int32(index))
        }
        var failure = [Int32](repeating: 0, count: ends.count)
        var queue: [Int] = []
        for letter in 0..<width {
            if next[letter] < 0 { next[letter] = 0 } else { queue.append(Int(next[letter])) }
        }
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            ends[state] += ends[Int(failure[state])]
            for letter in 0..<width {
                let slot = state * width + letter
                let fallback = next[Int(failure[state]) * width + letter]
                if next[slot] < 0 {
                    next[slot] = fallback
                } else {
                    failure[Int(next[slot])] = fallback
                    queue.append(Int(next[slot]))
                }
            }
        }
        var endStart: [Int32] = [0]
        for list in ends { endStart.append(endStart[endStart.count - 1] + Int32(list.count)) }
        self.next = next
        self.ends = ends.flatMap { $0 }
        self.endStart = endStart
    }

    /// How many states the automaton has (for the benchmark's report).
    var stateCount: Int { endStart.count - 1 }

    /// Walks `runs` and calls `found(word, run)` for every word ending at run `run` (a candidate:
    /// the caller checks repeats and word boundaries).
    func scan(_ runs: [Reading.Run], found: (Int, Int) -> Void) {
        next.withUnsafeBufferPointer { next in
            endStart.withUnsafeBufferPointer { endStart in
                ends.withUnsafeBufferPointer { ends in
                    var state = 0
                    for position in runs.indices {
                        let letter = Int(runs[position].letter)
                        guard letter >= 1, letter <= 26 else {
                            state = 0
                            continue
                        }
                        state = Int(next[state &* Self.alphabet &+ letter &- 1])
                        var end = Int(endStart[state])
                        let stop = Int(endStart[state &+ 1])
                        while end < stop {
                            found(Int(ends[end]), position)
                            end &+= 1
                        }
                    }
                }
            }
        }
    }
}
