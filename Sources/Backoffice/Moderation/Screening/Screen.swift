import BackofficePlatform
/// What the screen does with a text: publish it as it is, publish it with the matched words masked,
/// or hold it for a moderator. Ordered by severity.
package enum ScreenAction: String, Sendable, Comparable, CaseIterable {
    case allow, mask, hold

    private var severity: Int {
        switch self {
        case .allow: 0
        case .mask: 1
        case .hold: 2
        }
    }

    package static func < (lhs: ScreenAction, rhs: ScreenAction) -> Bool { lhs.severity < rhs.severity }
}

/// A rule of a term file: its id (reported with each match), what a match does, its terms, and
/// for a hold rule the severity its case opens at when above the policy's `held_severity` (the
/// self-harm rules: 4, critical).
package struct ScreeningRule: Sendable, Equatable {
    package let id: String
    package let action: ScreenAction
    package let terms: [String]
    package let severity: Int?

    package init(id: String, action: ScreenAction, terms: [String], severity: Int? = nil) {
        (self.id, self.action, self.terms, self.severity) = (id, action, terms, severity)
    }
}

/// The screen's answer for one text.
package struct ScreenVerdict: Sendable, Equatable {
    package let action: ScreenAction
    /// The matched rules' ids, sorted, each once.
    package let ruleIDs: [String]
    /// The text with every matched word's letters replaced by `*` (for `mask`; nil otherwise).
    package let maskedText: String?
    /// The highest severity a matched rule names (nil when none names one).
    package var severity: Int? = nil
}

/// The screen built from the term files: one automaton over all their terms, built once per
/// policy version. Matching folds case, accents, compatibility forms and confusables, reads l33t
/// inside a word, accepts repeated letters ("fuuuck") and separators inside a word ("b.a.d",
/// "b a d"), and matches whole words only: "Scunthorpe", "assistant" and "classic" pass.
package struct Screen: Sendable {
    /// A term as the automaton knows it (a class: a candidate match reads it without copying its arrays).
    final class Term: Sendable {
        let rule: Int
        /// Letters with repeats collapsed, and how many times each repeats in the term ("ass": a, s×2).
        let letters: [UInt8]
        let counts: [Int]
        /// Where the term has a space, as indices into `letters` ("kill yourself": 2).
        let breaks: [Int]

        init(rule: Int, letters: [UInt8], counts: [Int], breaks: [Int]) {
            (self.rule, self.letters, self.counts, self.breaks) = (rule, letters, counts, breaks)
        }
    }

    package let rules: [ScreeningRule]
    let terms: [Term]
    let automaton: TermAutomaton

    /// Compiles `rules`.
    /// - Throws: `TermProblem` for a term with no letter of the skeleton, or a character outside it.
    package init(rules: [ScreeningRule]) throws(TermProblem) {
        Glyph.prepare()
        var terms: [Term] = []
        for (index, rule) in rules.enumerated() {
            for text in rule.terms {
                let runs = Reading(text).runs
                guard !runs.isEmpty, runs.allSatisfy({ (1...26).contains($0.letter) }) else {
                    throw TermProblem(rule: rule.id, term: text)
                }
                terms.append(
                    Term(
                        rule: index, letters: runs.map(\.letter), counts: runs.map(\.count),
                        breaks: runs.indices.filter { runs[$0].spaceBefore }))
            }
        }
        self.rules = rules
        self.terms = terms
        self.automaton = TermAutomaton(terms.map(\.letters))
    }

    /// A term that cannot be matched: it has no letter of the Latin skeleton, or a character that is not one.
    package struct TermProblem: Error, Sendable {
        package let rule: String
        package let term: String
    }

    /// How many terms the screen matches.
    package var termCount: Int { terms.count }

    /// Screens `text`: the most severe matched rule's action, the matched rules, and the masked text.
    package func screen(_ text: String) -> ScreenVerdict {
        let reading = Reading(text)
        var matched = Set<Int>()
        var spans: [ClosedRange<Int>] = []
        automaton.scan(reading.runs) { word, end in
            let term = terms[word]
            guard let span = accept(term, endingAt: end, in: reading) else { return }
            matched.insert(term.rule)
            spans.append(span)
        }
        let action = matched.map { rules[$0].action }.max() ?? .allow
        return ScreenVerdict(
            action: action, ruleIDs: Set(matched.map { rules[$0].id }).sorted(),
            maskedText: action == .mask ? Self.mask(text, spans: spans, reading: reading) : nil,
            severity: matched.compactMap { rules[$0].severity }.max())
    }

    /// The scalars `term` covers when it ends at run `end`, if it is a whole-word match: each
    /// letter at least as often as in the term, no letter right before or after, and a space
    /// inside only where the term has one or between single letters ("b a d").
    private func accept(_ term: Term, endingAt end: Int, in reading: Reading) -> ClosedRange<Int>? {
        let runs = reading.runs
        let start = end - term.letters.count + 1
        for offset in term.counts.indices where runs[start + offset].count < term.counts[offset] { return nil }
        let first = runs[start].first
        let last = runs[end].last
        if reading.isLetter(reading.neighbour(of: first, step: -1)) { return nil }
        if reading.isLetter(reading.neighbour(of: last, step: 1)) { return nil }
        for offset in 1..<term.letters.count where runs[start + offset].spaceBefore && !term.breaks.contains(offset) {
            // a space the term does not have: only a spaced-out spelling ("b a d") passes
            return reading.onlySingleLetters(from: first, through: last) ? first...last : nil
        }
        return first...last
    }

    /// `text` with the letters inside `spans` replaced by `*` (separators and spaces kept).
    private static func mask(_ text: String, spans: [ClosedRange<Int>], reading: Reading) -> String {
        let covered = spans.sorted { $0.lowerBound < $1.lowerBound }
        var masked: [UInt8] = []
        masked.reserveCapacity(text.utf8.count)
        var index = -1  // the scalar the byte belongs to
        var next = 0
        var keep = true
        for byte in text.utf8 {
            if byte & 0xC0 != 0x80 {  // a scalar's first byte: decide for the whole scalar
                index += 1
                while next < covered.count, covered[next].upperBound < index { next += 1 }
                let inside = next < covered.count && covered[next].contains(index)
                keep = !inside || !(reading.isLetter(index) || reading.kinds[index] == Glyph.ignorable)
                if !keep, reading.kinds[index] != Glyph.ignorable { masked.append(UInt8(ascii: "*")) }
            }
            if keep { masked.append(byte) }
        }
        return String(decoding: masked, as: UTF8.self)
    }
}
