import Backoffice
import Foundation

// The screen's micro-benchmark: a 2,000-character post against 5,000 terms, timed call by call on
// one core. Prints the automaton's size and the latency percentiles; exits 1 when p99 is 50 µs or
// more. Run it in release: `swift run -c release screen-bench [--terms N] [--calls N]`.

@main
enum ScreenBench {
    static func main() {
        func option(_ name: String, _ fallback: Int) -> Int {
            let arguments = CommandLine.arguments
            guard let at = arguments.firstIndex(of: name), at + 1 < arguments.count, let value = Int(arguments[at + 1])
            else {
                return fallback
            }
            return value
        }

        let termCount = option("--terms", 5_000)
        let calls = option("--calls", 20_000)
        var random = SystemRandomNumberGenerator()
        let consonants = Array("bcdfghjklmnprstvwz")
        let vowels = Array("aeiou")
        /// A pronounceable made-up word of 4–9 letters (terms no real post is made of).
        func word() -> String {
            String(
                (0..<Int.random(in: 2...4, using: &random)).flatMap { _ in
                    [consonants.randomElement(using: &random)!, vowels.randomElement(using: &random)!]
                } + (Bool.random(using: &random) ? [consonants.randomElement(using: &random)!] : []))
        }
        var terms = Set<String>()
        while terms.count < termCount {
            terms.insert(Int.random(in: 0..<10, using: &random) == 0 ? word() + " " + word() : word())
        }
        let rules = [
            ScreeningRule(id: "bench.mask", action: .mask, terms: Array(terms.prefix(termCount * 9 / 10))),
            ScreeningRule(id: "bench.hold", action: .hold, terms: Array(terms.dropFirst(termCount * 9 / 10))),
        ]
        let built = ContinuousClock().measure { _ = try! Screen(rules: rules) }
        let screen = try! Screen(rules: rules)

        let sentences = [
            "Week three of the plan and my long run is finally over ten kilometres. ",
            "Does anyone have tips for stretching after a heavy leg day? ",
            "Sleep made a huge difference to my recovery, so did eating more protein. ",
            "Café au lait after the run, naïve me thought a marathon would be easy. ",
            "Hit 10,000 steps every day this week and I feel great! ",
        ]
        /// A post of exactly 2,000 characters: forum sentences, some l33t and accents, two made-up terms.
        func post(seed: Int) -> String {
            var text = ""
            var index = seed
            while text.count < 1_900 {
                text += sentences[index % sentences.count]
                index += 1
            }
            text += " " + terms.randomElement(using: &random)!.replacingOccurrences(of: "o", with: "0") + " "
            text += terms.randomElement(using: &random)!.map { "\($0)." }.joined()
            while text.count < 2_000 { text += "!" }
            return String(text.prefix(2_000))
        }
        let posts = (0..<16).map(post)
        var samples: [UInt64] = []
        samples.reserveCapacity(calls)
        var flagged = 0
        for _ in 0..<1_000 { _ = screen.screen(posts[0]) }  // warm up
        for call in 0..<calls {
            let text = posts[call % posts.count]
            let start = DispatchTime.now().uptimeNanoseconds
            let verdict = screen.screen(text)
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
            if verdict.action != .allow { flagged += 1 }
        }
        samples.sort()
        func percentile(_ p: Double) -> Double {
            Double(samples[min(samples.count - 1, Int(Double(samples.count) * p))]) / 1_000
        }
        print(
            "screen-bench: \(screen.termCount) terms, automaton built in \(built), posts of \(posts[0].count) characters"
        )
        print(
            String(
                format: "  %d calls: p50 %.1f µs, p90 %.1f µs, p99 %.1f µs, max %.1f µs; %d flagged", calls,
                percentile(0.5), percentile(0.9), percentile(0.99), Double(samples.last!) / 1_000, flagged))
        exit(percentile(0.99) < 50 ? 0 : 1)

    }
}
