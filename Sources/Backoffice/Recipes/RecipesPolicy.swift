import BackofficePlatform
import Foundation
import Yams

/// Recipes' rules (`policies/recipes.yaml`), read and digested with the other policies: the
/// household measures an ingredient may be given in, each as grams.
package struct RecipesPolicy: DomainPolicy {
    /// Grams per measure (`tbsp` → 15), besides `g` and `serving`, which every recipe knows.
    package let measures: [String: Double]

    package static let file = "recipes.yaml"

    package static func files(in directory: URL) -> [String] { [file] }

    package static func parse(_ texts: [String: String], directory: String) throws -> RecipesPolicy {
        let file = directory + "/" + Self.file
        let root = try? Yams.load(yaml: texts[Self.file] ?? "") as? [String: Any]
        guard let raw = root?["measures"] as? [String: Any], !raw.isEmpty else {
            throw PolicyError(file: file, entry: "measures", problem: "must be a mapping of measures to grams")
        }
        var measures: [String: Double] = [:]
        for (name, value) in raw {
            let grams = (value as? Double) ?? (value as? Int).map(Double.init)
            guard Validation.matches(name, length: 1...20, ArticleContent.slugByte), !["g", "serving"].contains(name),
                let grams, grams > 0, grams <= 1_000
            else {
                throw PolicyError(
                    file: file, entry: "measures.\(name)",
                    problem:
                        "a measure is lower-case letters (not g or serving) with its grams, over 0 and at most 1000")
            }
            measures[name] = grams
        }
        return RecipesPolicy(measures: measures)
    }

    /// The units an ingredient may be given in, sorted.
    package var units: [String] { (["g", "serving"] + measures.keys).sorted() }
}

extension PolicySet {
    /// Recipes' rules.
    package var recipes: RecipesPolicy { self[RecipesPolicy.self] }
}
