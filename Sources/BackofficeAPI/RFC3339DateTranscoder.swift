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
        if let date = Self.parse(text) { return date }
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: [],
                debugDescription: "Expected an RFC 3339 time such as 2026-12-01T09:00:00Z, got '\(text)'."))
    }

    /// Reads RFC 3339's `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`T` and `Z` in either case)
    /// without Foundation's formatters (they dominate the cost of decoding a batch of activity,
    /// and roll 30 February over to March); nil for anything else. Calendar dates are checked (no
    /// 31 April, 29 February only in leap years); fractions beyond the microsecond are dropped.
    public static func parse(_ text: String) -> Date? {
        var text = text
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { parse(bytes: $0) } ?? nil
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        let count = bytes.count
        guard count >= 20 else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for index in start..<(start + length) {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] | 0x20 == UInt8(ascii: "t"),
            bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":"), let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...lengths[month - 1]).contains(day) else { return nil }
        var index = 19
        var microseconds = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var (digits, scale) = (0, 1)
            let start = index
            while index < count, (48...57).contains(bytes[index]) {
                if index - start < 6 {  // microseconds, as PostgreSQL keeps times
                    digits = digits * 10 + Int(bytes[index] - 48)
                    scale *= 10
                }
                index += 1
            }
            guard index > start, index < count else { return nil }
            microseconds = digits * (1_000_000 / scale)
        }
        var offset = 0
        if bytes[index] | 0x20 == UInt8(ascii: "z") {
            index += 1
        } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            guard index + 6 == count, bytes[index + 3] == UInt8(ascii: ":"), let hours = number(index + 1, 2),
                let minutes = number(index + 4, 2),
                hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
            index += 6
        } else {
            return nil
        }
        guard index == count else { return nil }
        // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-compatible low-level date
        // algorithms").
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        // Half a microsecond up: the written microsecond survives the binary Date and the
        // truncation to whole microseconds on the way to PostgreSQL (…44.909Z is stored as .909000).
        return Date(timeIntervalSince1970: (Double(seconds * 1_000_000 + microseconds) + 0.5) / 1_000_000)
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

/// The one JSON form of the contract's objects outside the generated server (exports, streams):
/// keys sorted, slashes unescaped, times as `RFC3339DateTranscoder` writes them, as the server's
/// own answers are, so an object reads the same wherever it appears.
public enum ContractJSON {
    /// A new encoder of that form (`JSONEncoder` is not `Sendable`: one per use).
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339DateTranscoder.format(date))
        }
        return encoder
    }
}
