import Foundation
import OpenAPIRuntime

/// RFC 3339 times: written with fractional seconds, read with or without them (so clients may
/// send `2026-12-01T09:00:00Z`). Used by the server and the CLI's client alike.
public struct RFC3339DateTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    public func decode(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected an RFC 3339 time such as 2026-12-01T09:00:00Z, got '\(text)'."))
    }
}
