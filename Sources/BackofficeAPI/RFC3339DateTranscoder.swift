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
    /// milliseconds truncated, always UTC; a time read from text prints as it was written.
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        write(date, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the 24 bytes of `format(date)` to `bytes`.
    public static func write(_ date: Date, into bytes: inout [UInt8]) {
        // Truncated to the millisecond, after half a microsecond of slack: a time read from text
        // ("…34.890Z") is a double a hair below its value, and must print as it was written. Times
        // held to the microsecond (as PostgreSQL keeps them) never come within that slack of the
        // next millisecond, so they truncate as before.
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down))
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let millis = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func put(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(48 + value / divisor))
                value %= divisor
                divisor /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, 4)
        bytes.append(UInt8(ascii: "-"))
        put(Int(parts.tm_mon) + 1, 2)
        bytes.append(UInt8(ascii: "-"))
        put(Int(parts.tm_mday), 2)
        bytes.append(UInt8(ascii: "T"))
        put(Int(parts.tm_hour), 2)
        bytes.append(UInt8(ascii: ":"))
        put(Int(parts.tm_min), 2)
        bytes.append(UInt8(ascii: ":"))
        put(Int(parts.tm_sec), 2)
        bytes.append(UInt8(ascii: "."))
        put(millis, 3)
        bytes.append(UInt8(ascii: "Z"))
    }
}
