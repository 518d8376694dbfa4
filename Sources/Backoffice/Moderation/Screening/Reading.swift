import BackofficePlatform
/// A text as the screen reads it: per scalar what it is (`kinds`), and its letters as runs of one
/// letter with how often it repeats ("fuuuck" is f, u×3, c, k), which is what the term automaton
/// walks. Repeats merge across a separator only between single letters ("a s s" is a, s×2), so
/// "bad dog" stays b, a, d | d, o, g.
struct Reading {
    /// One letter, repeated `count` times, from scalar `first` to scalar `last`.
    struct Run {
        /// `1...26` (a–z), `27` a letter outside the skeleton, `0` a boundary (the automaton restarts).
        var letter: UInt8
        var count: Int
        var first: Int
        var last: Int
        /// Whether a space separates this run from the one before (a phrase, or a spaced-out word).
        var spaceBefore: Bool
    }

    /// Per scalar: `1...27` a letter, `Glyph.expansion` several letters, `Glyph.space`,
    /// `Glyph.joiner`, `Glyph.ignorable`, or `0` a boundary (digits and symbols already resolved).
    private(set) var kinds: [UInt8]
    private(set) var runs: [Run] = []

    init(_ text: String) {
        var kinds: [UInt8] = []
        kinds.reserveCapacity(text.utf8.count)
        var expansions: [Int: Unicode.Scalar] = [:]  // the few scalars that stand for several letters
        var hasLeet = false
        Glyph.codes.withUnsafeBufferPointer { table in
            for scalar in text.unicodeScalars {
                let code = scalar.value < 0x1_0000 ? table[Int(scalar.value)] : Glyph.code(scalar)
                if code == Glyph.expansion { expansions[kinds.count] = scalar }
                if code >= Glyph.leet { hasLeet = true }
                kinds.append(code)
            }
        }
        if hasLeet { Self.resolveLeet(&kinds) }
        self.kinds = kinds
        buildRuns(expansions)
    }

    /// Whether scalar `index`'s kind is a letter (or several).
    func isLetter(_ index: Int) -> Bool {
        guard kinds.indices.contains(index) else { return false }
        return (1...27).contains(kinds[index]) || kinds[index] == Glyph.expansion
    }

    /// The nearest scalar before (`step` -1) or after (`step` 1) `index` that is not ignorable.
    func neighbour(of index: Int, step: Int) -> Int {
        var at = index + step
        while kinds.indices.contains(at), kinds[at] == Glyph.ignorable { at += step }
        return at
    }

    /// Digits and symbols become the letter they stand for inside a word, a boundary elsewhere:
    /// a digit, `$` or `@` next to a letter ("h3ll0", "$hit"); `!`, `|` or `+` only between two
    /// ("sh!t", but not "damn!").
    private static func resolveLeet(_ kinds: inout [UInt8]) {
        func real(_ code: UInt8) -> Bool { (1...27).contains(code) || code == Glyph.expansion }
        for index in kinds.indices where kinds[index] >= Glyph.leet {
            let code = kinds[index]
            let letter = code & 0x3F
            let before = index > 0 && real(kinds[index - 1])
            var following = index + 1  // past repeats of the same symbol ("sh!!!t")
            while following < kinds.count, kinds[following] == code { following += 1 }
            let next = following < kinds.count ? kinds[following] : 0
            let after = real(next) || (next >= Glyph.leet && next < Glyph.between)
            let isLetter = code & Glyph.between != 0 ? before && after : before || real(next)
            kinds[index] = isLetter ? letter : 0
        }
    }

    /// The runs of the letters of `kinds`: the open run is kept aside and appended when the next
    /// one starts, so a repeat lengthens a local value.
    private mutating func buildRuns(_ expansions: [Int: Unicode.Scalar]) {
        var runs: [Run] = []
        runs.reserveCapacity(kinds.count)
        var open = Run(letter: 0, count: 0, first: 0, last: 0, spaceBefore: false)  // count 0: none open
        var separator: UInt8 = 0  // what came since the last letter: 0 nothing, space, joiner
        var lastLetterIndex = -1
        func add(_ letter: UInt8, at index: Int) {
            if lastLetterIndex >= 0, open.letter == letter,
                separator == 0 || (standsAlone(lastLetterIndex) && standsAlone(index))
            {
                open.count += 1
                open.last = index
            } else {
                if open.count > 0 { runs.append(open) }
                open = Run(
                    letter: letter, count: 1, first: index, last: index,
                    spaceBefore: separator == Glyph.space && lastLetterIndex >= 0)
            }
            separator = 0
        }
        for index in kinds.indices {
            let kind = kinds[index]
            switch kind {
            case Glyph.ignorable: continue
            case Glyph.space: separator = Glyph.space
            case Glyph.joiner: if separator != Glyph.space { separator = Glyph.joiner }
            case 0:
                if open.count > 0 { runs.append(open) }
                open.count = 0
                if runs.last?.letter != 0 {
                    runs.append(Run(letter: 0, count: 1, first: index, last: index, spaceBefore: false))
                }
                separator = 0
                lastLetterIndex = -1
            case Glyph.expansion:
                for letter in expansions[index].map(Glyph.expanded) ?? [] { add(letter, at: index) }
                lastLetterIndex = index
            default:
                add(kind, at: index)
                lastLetterIndex = index
            }
        }
        if open.count > 0 { runs.append(open) }
        self.runs = runs
    }

    /// Whether the letter at scalar `index` stands alone between separators ("b" in "b a d").
    private func standsAlone(_ index: Int) -> Bool {
        kinds[index] != Glyph.expansion && !isLetter(neighbour(of: index, step: -1))
            && !isLetter(neighbour(of: index, step: 1))
    }

    /// Whether every piece of letters between scalars `first` and `last` is one letter ("b a d").
    func onlySingleLetters(from first: Int, through last: Int) -> Bool {
        var letters = 0
        for index in first...last {
            if isLetter(index) {
                letters += kinds[index] == Glyph.expansion ? 2 : 1
                if letters > 1 { return false }
            } else if kinds[index] != Glyph.ignorable {
                letters = 0
            }
        }
        return true
    }
}
