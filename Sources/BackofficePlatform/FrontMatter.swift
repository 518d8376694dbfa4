import BackofficeAPI
import Foundation
import Yams

/// A document a manager wrote that cannot be read (front matter that is not a YAML mapping, a
/// rules or challenge file with a missing or mistyped field), with where and why.
package struct MalformedDocument: Error, CustomStringConvertible {
    package let description: String
}

/// A Markdown document with YAML front matter between `---` lines (the files managers write for
/// messages and content policies).
package struct FrontMatterDocument {
    /// The front matter's fields (empty without front matter).
    package let fields: [String: Any]
    /// The Markdown after the front matter, trimmed; nil when empty.
    package let body: String?

    /// - Throws: `MalformedDocument` when the front matter is not a YAML mapping.
    package init(text: String) throws {
        var lines = text.components(separatedBy: "\n")
        var fields: [String: Any] = [:]
        if lines.first?.trimmingCharacters(in: .whitespaces) == "---",
            let end = lines.dropFirst().firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "---" })
        {
            let loaded: Any?
            do { loaded = try Yams.load(yaml: lines[1..<end].joined(separator: "\n")) } catch {
                throw MalformedDocument(description: "the front matter is not valid YAML: \(error)")
            }
            guard let map = loaded as? [String: Any] else {
                throw MalformedDocument(description: "the front matter must be a mapping of fields")
            }
            fields = map
            lines.removeSubrange(0...end)
        }
        self.fields = fields
        let markdown = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        body = markdown.isEmpty ? nil : markdown
    }

    /// A field as text; YAML times come back as RFC 3339 (UTC, milliseconds).
    package func text(_ name: String) -> String? {
        switch fields[name] {
        case let date as Date: RFC3339DateTranscoder.format(date)
        case let value?: "\(value)"
        case nil: nil
        }
    }
}

/// A YAML or JSON document (JSON is YAML) decoded into a contract type: a rules file, a
/// challenge file. Unknown keys are refused when the type says so.
package enum StructuredDocument {
    /// - Throws: `MalformedDocument` naming the place (`metrics[0].daily_cap`) and what is wrong.
    package static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        do {
            return try YAMLDecoder().decode(T.self, from: text)
        } catch let error as DecodingError {
            throw MalformedDocument(description: describe(error))
        } catch {
            throw MalformedDocument(description: "not YAML or JSON: \(error)")
        }
    }

    package static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            let text = path.reduce("") { text, key in
                key.intValue.map { "\(text)[\($0)]" } ?? (text.isEmpty ? key.stringValue : "\(text).\(key.stringValue)")
            }
            return text.isEmpty ? "the document" : text
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(place(context.codingPath + [key])): is required"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(place(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
