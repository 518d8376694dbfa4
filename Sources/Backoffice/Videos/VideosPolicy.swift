import BackofficePlatform
import Foundation
import Yams

/// Workout videos' rules (`policies/videos.yaml`), read and digested with the other policies: the
/// categories, and the CDN hosts a video's address may name.
package struct VideosPolicy: DomainPolicy {
    /// The categories, in the file's order (lower-case letters and dashes).
    package let categories: [String]
    /// The hosts a video's address may name (lower case).
    package let cdnHosts: Set<String>

    package static let file = "videos.yaml"

    package static func files(in directory: URL) -> [String] { [file] }

    package static func parse(_ texts: [String: String], directory: String) throws -> VideosPolicy {
        let file = directory + "/" + Self.file
        let root = try? Yams.load(yaml: texts[Self.file] ?? "") as? [String: Any]
        func list(_ key: String, _ valid: (String) -> Bool, _ rule: String) throws -> [String] {
            guard let values = root?[key] as? [String], !values.isEmpty, values.allSatisfy(valid),
                Set(values).count == values.count
            else {
                throw PolicyError(file: file, entry: key, problem: "must be a non-empty list of \(rule), once each")
            }
            return values
        }
        let categories = try list(
            "categories", { Validation.matches($0, length: 2...40, ArticleContent.slugByte) },
            "lower-case letters, digits and dashes")
        let hosts = try list(
            "cdn_hosts", { $0 == $0.lowercased() && URL(string: "https://\($0)/")?.host == $0 }, "host names")
        return VideosPolicy(categories: categories, cdnHosts: Set(hosts))
    }
}

extension PolicySet {
    /// Workout videos' rules.
    package var videos: VideosPolicy { self[VideosPolicy.self] }
}
