import BackofficePlatform
import Foundation
import Yams

/// Customers' health data (`policies/privacy.yaml`), read and digested with the other policies.
package struct PrivacyPolicy: DomainPolicy {
    /// Why a person may read a health profile: code → label, in the file's order.
    package let readPurposes: [(code: String, label: String)]

    /// Whether `code` is one of the purposes.
    package func allows(purpose code: String) -> Bool { readPurposes.contains { $0.code == code } }

    /// The purposes' codes, comma-separated (for messages).
    package var purposeCodes: String { readPurposes.map(\.code).joined(separator: ", ") }

    package static let file = "privacy.yaml"

    package static func files(in directory: URL) -> [String] { [file] }

    /// Reads `health_profile_read_purposes`: a mapping of codes (lower-case letters and `_`) to labels.
    package static func parse(_ texts: [String: String], directory: String) throws -> PrivacyPolicy {
        let (key, file) = ("health_profile_read_purposes", directory + "/" + file)
        guard let root = try? Yams.compose(yaml: texts[Self.file] ?? ""), let purposes = root[.init(key)]?.mapping,
            !purposes.isEmpty
        else {
            throw PolicyError(file: file, entry: key, problem: "must be a non-empty mapping of purpose codes to labels")
        }
        var read: [(code: String, label: String)] = []
        for (code, label) in purposes {
            guard let code = code.string, !code.isEmpty, code.count <= 40,
                code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "_" }),
                let label = label.string, !label.isEmpty
            else {
                throw PolicyError(
                    file: file, entry: "\(key).\(code.string ?? "?")",
                    problem: "a code is 1–40 lower-case letters or _, with a label")
            }
            read.append((code, label))
        }
        return PrivacyPolicy(readPurposes: read)
    }
}

extension PolicySet {
    /// Customers' health data: why a person may read a profile.
    package var privacy: PrivacyPolicy { self[PrivacyPolicy.self] }
}
