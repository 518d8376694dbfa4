import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Screen (pure)")
struct ScreenTests {
    static let screen = try! Screen(rules: [
        ScreeningRule(id: "t.mask", action: .mask, terms: ["bad", "ass", "shit"]),
        ScreeningRule(id: "t.hold", action: .hold, terms: ["kill yourself", "kys"]),
    ])

    @Test("a clean text is allowed with no rule and no masked text")
    func clean() {
        #expect(Self.screen.screen("A good run today.") == ScreenVerdict(action: .allow, ruleIDs: [], maskedText: nil))
    }

    @Test("a matched word is masked letter by letter; separators and the rest stay")
    func masks() {
        let verdict = Self.screen.screen("That was b.a.d, really BAD and sh!t.")
        #expect(verdict.action == .mask)
        #expect(verdict.ruleIDs == ["t.mask"])
        #expect(verdict.maskedText == "That was *.*.*, really *** and ****.")
    }

    @Test("the most severe rule decides; every matched rule is named once")
    func severity() {
        let verdict = Self.screen.screen("kys, you bad bad ass")
        #expect(verdict.action == .hold)
        #expect(verdict.ruleIDs == ["t.hold", "t.mask"])
        #expect(verdict.maskedText == nil)
    }

    @Test("whole words only: a term inside a word passes, at the edge of punctuation it matches")
    func wholeWords() {
        for text in ["badminton", "a sandbad", "assistant", "class", "bass", "is hit", "ba d", "bads"] {
            #expect(Self.screen.screen(text).action == .allow, "\(text)")
        }
        for text in ["bad", "(bad)", "bad!", "\"bad\"", "x bad", "b a d", "b-a-d"] {
            #expect(Self.screen.screen(text).action == .mask, "\(text)")
        }
    }

    @Test("repeats: more of a letter matches, fewer does not ('as' is not 'ass')")
    func repeats() {
        #expect(Self.screen.screen("baaaad").action == .mask)
        #expect(Self.screen.screen("asssss").action == .mask)
        #expect(Self.screen.screen("as").action == .allow)
        #expect(Self.screen.screen("a s").action == .allow)
        #expect(Self.screen.screen("a s s").action == .mask)
    }

    @Test("a phrase matches with its spaces, without them, and not with other words between")
    func phrases() {
        #expect(Self.screen.screen("kill yourself").action == .hold)
        #expect(Self.screen.screen("killyourself").action == .hold)
        #expect(Self.screen.screen("kill   your-self").action == .hold)
        #expect(Self.screen.screen("kill it yourself").action == .allow)
        #expect(Self.screen.screen("kil lyourself").action == .allow)
    }

    @Test("Unicode variants: confusables, accents, full-width, mathematical letters, invisible characters")
    func unicode() {
        // ß reads "ss": a repeated s
        for text in ["bаd", "BÀD", "ｂａｄ", "𝐛𝐚𝐝", "b\u{200B}a\u{200B}d", "ba\u{0301}d", "ßhit"] {
            #expect(Self.screen.screen(text).action == .mask, "\(text.unicodeScalars.map(\.value))")
        }
    }

    @Test("l33t counts inside a word only: digits alone are numbers")
    func leet() {
        #expect(Self.screen.screen("b4d").action == .mask)
        #expect(Self.screen.screen("@$$").action == .allow)  // no real letter: symbols
        #expect(Self.screen.screen("a$$").action == .mask)
        #expect(Self.screen.screen("84d").action == .allow)  // the 8 has no letter before it, so stays a digit
        #expect(Self.screen.screen("100 reps, 5 sets").action == .allow)
    }

    @Test("a term that is not letters is refused at load")
    func badTerm() {
        #expect(throws: Screen.TermProblem.self) {
            try Screen(rules: [ScreeningRule(id: "x", action: .mask, terms: ["100"])])
        }
    }

    @Test("the automaton finds what a naive search finds, over many overlapping terms")
    func automatonAgreesWithNaiveSearch() {
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abcd")
        let words = (0..<300).map { _ in
            String(
                (0..<Int.random(in: 1...4, using: &generator)).map { _ in letters.randomElement(using: &generator)! })
        }
        let automaton = TermAutomaton(words.map { $0.utf8.map { $0 - 0x60 } })
        for _ in 0..<50 {
            let text = String((0..<40).map { _ in letters.randomElement(using: &generator)! })
            let runs = text.utf8.enumerated().map {
                Reading.Run(letter: $1 - 0x60, count: 1, first: $0, last: $0, spaceBefore: false)
            }
            var found = Set<[Int]>()
            automaton.scan(runs) { word, end in found.insert([word, end]) }
            var expected = Set<[Int]>()
            let chars = Array(text)
            for (index, word) in words.enumerated() {
                let w = Array(word)
                for end in chars.indices where end + 1 >= w.count && Array(chars[(end + 1 - w.count)...end]) == w {
                    expected.insert([index, end])
                }
            }
            #expect(found == expected)
        }
    }
}
