import BackofficePlatform
import Foundation

/// Parses an RFC 3339 time given on the command line.
func parseTime(_ text: String?, _ option: String) throws -> Date? {
    guard let text else { return nil }
    if let date = try? Date(text, strategy: .iso8601) { return date }
    if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
    throw CLIFailure.usage("\(option) must be an RFC 3339 time such as 2026-12-01T09:00:00Z, got '\(text)'")
}

/// Parses repeated `A:B` whole-number pairs given on the command line (`--lines 2:1`).
func parsePairs(_ texts: [String], _ option: String) throws -> [(Int, Int)] {
    try texts.map { text in
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]), let second = Int(parts[1]) else {
            throw CLIFailure.usage("\(option) takes A:B with two whole numbers, such as 2:1, got '\(text)'")
        }
        return (first, second)
    }
}
