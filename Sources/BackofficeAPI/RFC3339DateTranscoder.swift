import Foundation
import OpenAPIRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// RFC 3339 times: written in UTC with milliseconds (`2026-12-01T09:00:00.000Z`), read with or
/// without fractional seconds (so clients may send `2026-12-01T09:00:00Z`). Used by the server,
/// the CLI's client and the hand-written list encoder alike, so all write the same bytes.
public struct RFC3339DateTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String { Self.format(date) }

    public func decode(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        throw DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "Expected an RFC 3339 time such as 2026-12-01T09:00:00Z, got '\(text)'."))
    }

    /// Formats without Foundation's formatters (they dominate the cost of encoding list pages):
    /// milliseconds truncated, always UTC.
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let millis = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, _ offset: Int, _ width: Int) {
            var value = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[index] = UInt8(48 + value % 10)
                value /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, 0, 4)
        bytes[4] = UInt8(ascii: "-")
        put(Int(parts.tm_mon) + 1, 5, 2)
        bytes[7] = UInt8(ascii: "-")
        put(Int(parts.tm_mday), 8, 2)
        bytes[10] = UInt8(ascii: "T")
        put(Int(parts.tm_hour), 11, 2)
        bytes[13] = UInt8(ascii: ":")
        put(Int(parts.tm_min), 14, 2)
        bytes[16] = UInt8(ascii: ":")
        put(Int(parts.tm_sec), 17, 2)
        bytes[19] = UInt8(ascii: ".")
        put(millis, 20, 3)
        bytes[23] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }
}
