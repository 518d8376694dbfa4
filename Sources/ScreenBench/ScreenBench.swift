import Backoffice
import BackofficePlatform
import Foundation

/// The screen's micro-benchmark: a 2,000-character post against 5,000 terms, timed call by call on
/// one core. Prints the automaton's build time and the latency percentiles; exits 1 when p99 is
/// 50 µs or more. Run it in release: `swift run -c release screen-bench [--terms N] [--calls N]`.
@main
enum ScreenBench {
    static func main() throws {
        let termCount = option("--terms", 5_000)
        let calls = option("--calls", 20_000)
        var random = SystemRandomNumberGenerator()
        // none of the sentences' own words, so the clean posts are clean
        let words = Set(
            sentences.joined().lowercased().folding(options: .diacriticInsensitive, locale: nil).split { !$0.isLetter }
                .map(String.init))
        var terms = Set<String>()
        while terms.count < termCount {
            let term = Int.random(in: 0..<10, using: &random) == 0 ? word(&random) + " " + word(&random) : word(&random)
            if term.split(separator: " ").allSatisfy({ !words.contains(String($0)) }) { terms.insert(term) }
        }
        let list = Array(terms)
        let rules = [
            ScreeningRule(id: "bench.mask", action: .mask, terms: Array(list.prefix(termCount * 9 / 10))),
            ScreeningRule(id: "bench.hold", action: .hold, terms: Array(list.dropFirst(termCount * 9 / 10))),
        ]
        var screen: Screen?
        let built = try ContinuousClock().measure { screen = try Screen(rules: rules) }
        guard let screen else { return }
        let posts = (0..<16).map { post(seed: $0, terms: list, random: &random) }
        let clean = (0..<16).map { post(seed: $0, terms: [], random: &random) }
        for _ in 0..<1_000 { _ = screen.screen(posts[0]) }  // warm up
        print("screen-bench: \(screen.termCount) terms, automaton built in \(built), posts of \(posts[0].count) chars")
        let flagged = measure(screen, posts, calls: calls, label: "with two terms (masked)")
        let cleanP99 = measure(screen, clean, calls: calls, label: "clean (allowed)")
        exit(flagged < 50 && cleanP99 < 50 ? 0 : 1)
    }

    /// Times `calls` screens of `posts` one by one; prints the percentiles; returns p99 in µs.
    static func measure(_ screen: Screen, _ posts: [String], calls: Int, label: String) -> Double {
        var samples: [UInt64] = []
        samples.reserveCapacity(calls)
        var flagged = 0
        for call in 0..<calls {
            let start = DispatchTime.now().uptimeNanoseconds
            let verdict = screen.screen(posts[call % posts.count])
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
            if verdict.action != .allow { flagged += 1 }
        }
        samples.sort()
        func micros(_ fraction: Double) -> Double {
            Double(samples[min(samples.count - 1, Int(Double(samples.count) * fraction))]) / 1_000
        }
        let figures = String(
            format: "%d calls, p50 %.1f µs, p90 %.1f µs, p99 %.1f µs, max %.1f µs; %d flagged", calls, micros(0.5),
            micros(0.9), micros(0.99), micros(1), flagged)
        print("  \(label): \(figures)")
        return micros(0.99)
    }

    /// The forum sentences the posts are made of (some accents and digits).
    static let sentences = [
        "Week three of the plan and my long run is finally over ten kilometres. ",
        "Does anyone have tips for stretching after a heavy leg day? ",
        "Sleep made a huge difference to my recovery, so did eating more protein. ",
        "Café au lait after the run, naïve me thought a marathon would be easy. ",
        "Hit 10,000 steps every day this week and I feel great! ",
    ]

    /// The whole number after `name` on the command line, or `fallback`.
    static func option(_ name: String, _ fallback: Int) -> Int {
        let arguments = CommandLine.arguments
        guard let at = arguments.firstIndex(of: name), at + 1 < arguments.count, let value = Int(arguments[at + 1])
        else { return fallback }
        return value
    }

    /// A pronounceable made-up word of 4–9 letters (a term no real post is made of).
    static func word(_ random: inout SystemRandomNumberGenerator) -> String {
        let consonants = Array("bcdfghjklmnprstvwz")
        let vowels = Array("aeiou")
        var letters: [Character] = []
        for _ in 0..<Int.random(in: 2...4, using: &random) {
            letters += [consonants.randomElement(using: &random)!, vowels.randomElement(using: &random)!]
        }
        if Bool.random(using: &random) { letters.append(consonants.randomElement(using: &random)!) }
        return String(letters)
    }

    /// A post of exactly 2,000 characters: forum sentences (some accents and digits), and (given
    /// terms) a term in l33t and a term spelled out with dots.
    static func post(seed: Int, terms: [String], random: inout SystemRandomNumberGenerator) -> String {
        var text = ""
        var index = seed
        while text.count < 1_900 {
            text += sentences[index % sentences.count]
            index += 1
        }
        if !terms.isEmpty {
            text += " " + terms.randomElement(using: &random)!.replacingOccurrences(of: "o", with: "0") + " "
            text += terms.randomElement(using: &random)!.map { "\($0)." }.joined()
        }
        while text.count < 2_000 { text += "!" }
        return String(text.prefix(2_000))
    }
}
