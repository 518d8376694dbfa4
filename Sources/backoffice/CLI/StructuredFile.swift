import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation

/// A text file a command reads (UTF-8); exit 64 when it cannot be read.
func readTextFile(_ path: String) throws -> String {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw CLIFailure(message: "error: cannot read \(path)", exitCode: 64)
    }
    return text
}

/// A YAML or JSON file decoded into a contract type (a rules file, a challenge file); a failure
/// is reported like the service's: exit 64 when unreadable, 6 when malformed.
func readStructuredFile<T: Decodable>(_ type: T.Type, at path: String) throws -> T {
    let text = try readTextFile(path)
    do { return try StructuredDocument.decode(T.self, from: text) } catch let error as MalformedDocument {
        throw CLIFailure(message: "error: \(path): \(error)", exitCode: 6)
    }
}

/// A JSON decoder for the contract's types (dates as RFC 3339 text, as the service writes them).
func contractJSONDecoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
        try RFC3339DateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
    }
    return decoder
}
