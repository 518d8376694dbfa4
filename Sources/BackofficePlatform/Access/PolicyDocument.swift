import Foundation
import Yams

/// One parsed policy file, read value by value: each read names the file and the entry at a problem.
package struct PolicyDocument {
    package let values: [String: Any]
    package let file: String
    package init(values: [String: Any], file: String) { (self.values, self.file) = (values, file) }

    /// The file `name` among `texts` (keyed by path relative to the policies `directory`), which
    /// must be a YAML mapping.
    /// - Throws: `PolicyError` for a missing file, invalid YAML or another shape.
    package init(_ texts: [String: String], _ name: String, directory: String) throws {
        let file = directory + "/" + name
        let loaded: Any?
        do { loaded = try Yams.load(yaml: texts[name] ?? "") } catch {
            throw PolicyError(file: file, entry: "(file)", problem: "is not valid YAML: \(error)")
        }
        guard let map = loaded as? [String: Any] else {
            throw PolicyError(file: file, entry: "(file)", problem: "must be a mapping")
        }
        self.init(values: map, file: file)
    }

    /// A whole number in `range` at `section.key`.
    package func integer(_ section: String, _ key: String, _ range: ClosedRange<Int>) throws -> Int {
        let entry = "\(section).\(key)"
        guard let map = values[section] as? [String: Any] else {
            throw PolicyError(file: file, entry: section, problem: "missing section")
        }
        guard let value = map[key] else { throw PolicyError(file: file, entry: entry, problem: "missing value") }
        guard let number = value as? Int else {
            throw PolicyError(file: file, entry: entry, problem: "must be a whole number, got '\(value)'")
        }
        guard range.contains(number) else {
            throw PolicyError(
                file: file, entry: entry,
                problem: "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
        }
        return number
    }

    /// A list of role names (each a known role) at `section.key`.
    package func roles(_ section: String, _ key: String) throws -> Set<String> {
        let entry = "\(section).\(key)"
        guard let value = (values[section] as? [String: Any])?[key] else {
            throw PolicyError(file: file, entry: entry, problem: "missing value")
        }
        guard let names = value as? [String] else {
            throw PolicyError(file: file, entry: entry, problem: "must be a list of roles")
        }
        for name in names where Role(rawValue: name) == nil {
            throw PolicyError(
                file: file, entry: entry,
                problem: "'\(name)' is not a role (\(Role.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return Set(names)
    }
}
