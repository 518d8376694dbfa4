import Foundation
import Yams
import BackofficePlatform

/// Forum moderation's policy (`policies/moderation/`): report reasons, decision grounds, the
/// repeat-offender threshold, how long a moderator holds a case, how to appeal, and the screen
/// built from the term files (`terms/*.yaml`, one per language). Decisions record `digest`.
package struct ModerationPolicy: DomainPolicy {
    /// A reason a reporter gives, with the severity a case opens at (1 low … 4 critical).
    package struct ReportReason: Sendable, Equatable {
        package let code: String
        package let label: String
        package let severity: Int
    }

    /// A ground a decision cites: a code, what it means, and the community guidelines' section.
    package struct Ground: Sendable, Equatable {
        package let code: String
        package let label: String
        package let section: String
    }

    /// N upheld cases within D days flag an author.
    package struct OffenderThreshold: Sendable, Equatable, Codable {
        package var upheldCases: Int
        package var days: Int

        package init(upheldCases: Int, days: Int) { (self.upheldCases, self.days) = (upheldCases, days) }
    }

    package let reportReasons: [ReportReason]
    package let heldSeverity: Int
    package let grounds: [Ground]
    package let repeatOffenders: OffenderThreshold
    package let assignmentMinutes: Int
    package let appeal: String
    package let screen: Screen
    /// SHA-256 (hex) over the moderation files' names and bytes.
    package let digest: String

    package func reason(_ code: String) -> ReportReason? { reportReasons.first { $0.code == code } }
    package func ground(_ code: String) -> Ground? { grounds.first { $0.code == code } }

    /// The policy file and the term files, by path relative to the policies directory.
    package static let policyFile = "moderation/policy.yaml"
    package static let termsDirectory = "moderation/terms"

    /// The policy file and the term files (`moderation/terms/*.yaml`) in `directory`.
    package static func files(in directory: URL) -> [String] {
        let terms = directory.appendingPathComponent(termsDirectory)
        let termFiles = ((try? FileManager.default.contentsOfDirectory(atPath: terms.path)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.map { termsDirectory + "/" + $0 }
        return [policyFile] + termFiles
    }

    /// Validates the moderation texts among `texts` (keyed by path relative to the policies directory).
    /// - Throws: `PolicyError` naming the file and entry at the first problem.
    package static func parse(_ texts: [String: String], directory: String) throws -> ModerationPolicy {
        let file = directory + "/" + policyFile
        guard let values = (try? Yams.load(yaml: texts[policyFile] ?? "")) as? [String: Any] else {
            throw PolicyError(file: file, entry: "(file)", problem: "must be a YAML mapping")
        }
        let document = PolicyDocument(values: values, file: file)
        let reasons = try entries(values, "report_reasons", file: file).map { code, map in
            guard let label = map["label"] as? String, let severity = map["severity"] as? Int,
                (1...4).contains(severity)
            else {
                throw PolicyError(
                    file: file, entry: "report_reasons.\(code)", problem: "needs a label and a severity of 1–4")
            }
            return ReportReason(code: code, label: label, severity: severity)
        }
        let grounds = try entries(values, "grounds", file: file).map { code, map in
            guard let label = map["label"] as? String, let section = map["section"] as? String else {
                throw PolicyError(file: file, entry: "grounds.\(code)", problem: "needs a label and a section")
            }
            return Ground(code: code, label: label, section: section)
        }
        guard let held = values["held_severity"] as? Int, (1...4).contains(held) else {
            throw PolicyError(file: file, entry: "held_severity", problem: "must be 1, 2, 3 or 4")
        }
        guard let appeal = values["appeal"] as? String, !appeal.isEmpty else {
            throw PolicyError(file: file, entry: "appeal", problem: "must say how to appeal")
        }
        return ModerationPolicy(
            reportReasons: reasons, heldSeverity: held, grounds: grounds,
            repeatOffenders: OffenderThreshold(
                upheldCases: try document.integer("repeat_offenders", "upheld_cases", 1...100),
                days: try document.integer("repeat_offenders", "days", 1...365)),
            assignmentMinutes: try document.integer("assignment", "minutes", 1...1_440), appeal: appeal,
            screen: try screen(texts, directory: directory), digest: digest(texts))
    }

    /// A mapping of codes (lower-case letters and `_`) to mappings, sorted by code.
    private static func entries(_ values: [String: Any], _ key: String, file: String) throws
        -> [(String, [String: Any])]
    {
        guard let map = values[key] as? [String: Any], !map.isEmpty else {
            throw PolicyError(file: file, entry: key, problem: "must be a non-empty mapping")
        }
        var result: [(String, [String: Any])] = []
        for (code, body) in map.sorted(by: { $0.key < $1.key }) {
            guard code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "_" }), !code.isEmpty,
                let body = body as? [String: Any]
            else {
                throw PolicyError(file: file, entry: "\(key).\(code)", problem: "a code is lower-case letters or _")
            }
            result.append((code, body))
        }
        return result
    }

    /// The screen over every term file's rules.
    private static func screen(_ texts: [String: String], directory: String) throws -> Screen {
        var rules: [ScreeningRule] = []
        let files = texts.keys.filter { $0.hasPrefix(termsDirectory + "/") }.sorted()
        guard !files.isEmpty else {
            throw PolicyError(
                file: directory + "/" + termsDirectory, entry: "(directory)", problem: "has no term file (*.yaml)")
        }
        for name in files {
            let file = directory + "/" + name
            guard let values = (try? Yams.load(yaml: texts[name] ?? "")) as? [String: Any],
                let list = values["rules"] as? [[String: Any]], !list.isEmpty
            else { throw PolicyError(file: file, entry: "rules", problem: "must be a non-empty list of rules") }
            for (index, rule) in list.enumerated() {
                guard let id = rule["id"] as? String, !id.isEmpty,
                    let action = (rule["action"] as? String).flatMap(ScreenAction.init), action != .allow,
                    let terms = rule["terms"] as? [Any], !terms.isEmpty
                else {
                    throw PolicyError(
                        file: file, entry: "rules[\(index)]",
                        problem: "needs an id, an action (mask or hold) and a non-empty list of terms")
                }
                guard !rules.contains(where: { $0.id == id }) else {
                    throw PolicyError(file: file, entry: "rules[\(index)].id", problem: "'\(id)' is used twice")
                }
                let severity = rule["severity"] as? Int
                guard rule["severity"] == nil || (severity.map { (1...4).contains($0) } ?? false),
                    action == .hold || severity == nil
                else {
                    throw PolicyError(
                        file: file, entry: "rules[\(index)].severity", problem: "must be 1–4, and only on a hold rule")
                }
                rules.append(ScreeningRule(id: id, action: action, terms: terms.map { "\($0)" }, severity: severity))
            }
        }
        do { return try Screen(rules: rules) } catch {
            throw PolicyError(
                file: directory + "/" + termsDirectory, entry: error.rule,
                problem: "the term '\(error.term)' has a character that is not a letter")
        }
    }

    private static func digest(_ texts: [String: String]) -> String {
        PolicySet.digest(of: texts.filter { $0.key.hasPrefix("moderation/") })
    }
}

extension PolicySet {
    /// The moderation policy (`moderation/policy.yaml` and the term files).
    package var moderation: ModerationPolicy { self[ModerationPolicy.self] }
}
