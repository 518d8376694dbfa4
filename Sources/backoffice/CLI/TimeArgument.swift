import BackofficePlatform
import Foundation

/// Parses an RFC 3339 time given on the command line.
func parseTime(_ text: String?, _ option: String) throws -> Date? {
    guard let text else { return nil }
    if let date = try? Date(text, strategy: .iso8601) { return date }
    if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
    throw CLIFailure.usage("\(option) must be an RFC 3339 time such as 2026-12-01T09:00:00Z, got '\(text)'")
}
