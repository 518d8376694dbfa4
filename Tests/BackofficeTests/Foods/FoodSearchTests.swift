import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Food search by words: the index of live names' words against a Swift filter, pathological texts bounded")
struct FoodSearchTests {
    static let vocabulary = ["oat", "oats", "bar", "rice", "cake", "dark", "choc", "7", "x2", "milk"]

    /// A name's words as the search defines them: runs of letters and digits, lower-cased.
    static func words(_ text: String) -> Set<String> {
        Set(text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init))
    }

    /// Every page of a search (pages of 3), in order.
    static func search(_ env: TestEnvironment, _ text: String) async throws -> [LiveFood] {
        var found: [LiveFood] = []
        var after: (name: String, id: UUID)?
        while true {
            let page = try await env.database.read(
                SearchFoods(text: text, after: after, limit: 3), context: env.context(.appService))
            found += page
            guard page.count == 3, let last = page.last else { return found }
            after = (
                try #require(
                    try await env.ownerScalar(
                        "SELECT lower(name) FROM food_versions WHERE food_id = '\(last.id)'", as: String.self)), last.id
            )
        }
    }

    @Test(
        """
        property: over 40 live foods named from ten words (a draft, an archived one and an old version's name \
        among them), 200 random texts in any case and punctuation find exactly the live foods whose names have \
        each word, every page in order once
        """
    )
    func matchesSwiftFilter() async throws {
        try await TestEnvironment.with { env in
            var random = SplitMix64(seed: 0xF00D_5EA7)
            var live: [UUID: String] = [:]
            for index in 0..<40 {
                let name =
                    (0..<Int.random(in: 1...3, using: &random)).map { _ in
                        Self.vocabulary.randomElement(using: &random)!
                    }.joined(separator: [" ", ", ", "-", " & "].randomElement(using: &random)!) + " \(index)"
                let id = try await RecipesTests.liveFood(env, FoodFacts(name: name.capitalized, energyKcal: 100))
                live[id] = name
            }
            let draft = try await env.database.run(
                CreateFood(gtin: nil, facts: FoodFacts(name: "oat bar draft", energyKcal: 1)),
                context: env.context(.expert))
            let archived = try await RecipesTests.liveFood(env, FoodFacts(name: "oat bar archived", energyKcal: 1))
            _ = try await env.database.run(
                MoveFood(id: archived, move: .archive, comment: "Gone"), context: env.context(.backendManager))
            // A new version in review keeps the live name searchable, not the new one.
            let renamed = try #require(live.keys.first)
            var changes = FoodChanges()
            changes.name = "milk renamed"
            _ = try await env.database.run(
                UpdateFood(id: renamed, changes: changes, ifMatch: EntityTag.of(1)), context: env.context(.expert))
            for _ in 0..<200 {
                let chosen = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    let word = Self.vocabulary.randomElement(using: &random)!
                    return Bool.random(using: &random) ? word.uppercased() : word
                }
                let text = chosen.joined(separator: [" ", ",", " - ", "  "].randomElement(using: &random)!)
                let found = try await Self.search(env, text)
                let expected = Set(live.filter { Self.words($0.value).isSuperset(of: Self.words(text)) }.keys)
                #expect(Set(found.map(\.id)) == expected, "\(text)")
                #expect(Set(found.map(\.id)).count == found.count, "\(text): each once")
                #expect(!found.contains { $0.id == draft.id || $0.id == archived }, "live foods only")
            }
        }
    }

    @Test(
        """
        pathological texts: 100 characters of punctuation, of one letter repeated, and fifty one-letter words \
        are answered (422 or a page) by a real server, the fastest of three within a second; 101 characters are 422
        """
    )
    func pathologicalTexts() async throws {
        try await TestEnvironment.with { env in
            _ = try await RecipesTests.liveFood(env, FoodFacts(name: "a b c d", energyKcal: 1))
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                for (text, status) in [
                    (String(repeating: "%", count: 100), 422), (String(repeating: "a", count: 100), 200),
                    (Array(repeating: "a", count: 50).joined(separator: " "), 200),
                    (String(repeating: "ab", count: 50) + "x", 422),
                ] {
                    let query = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    // The fastest of three answers: a busy machine (the whole suite at once) can stall
                    // any one request for seconds; an unbounded search is slow every time.
                    var fastest = Duration.seconds(3600)
                    for _ in 0..<3 {
                        let started = ContinuousClock.now
                        let answer = try await client.call(.get, "/v1/foods/search?q=\(query)", token: app)
                        fastest = min(fastest, ContinuousClock.now - started)
                        #expect(answer.status == status, "\(text.prefix(12))…: \(answer.text.prefix(200))")
                    }
                    #expect(fastest < .seconds(1), "\(text.prefix(12))… bounded: the fastest of 3 took \(fastest)")
                }
            }
        }
    }
}
