import Foundation
import Logging

/// JSON lines (`LOG_FORMAT=json`): one object per line with `time` (RFC 3339, milliseconds, UTC),
/// `level`, `logger` (the label), `message`, then every metadata value under its own key (an
/// event's error as `error.message` and `error.type`) — strings as strings, nested metadata as
/// objects and lists as arrays. A metadata key that names one of the first four is dropped rather
/// than written twice.
package enum JSONLines: LogLineLayout {
    package static func line(for event: LogEvent, label: String, metadata all: Logger.Metadata) -> [UInt8] {
        var out = JSONBytes(capacity: 256)
        out.raw("{\"time\":")
        out.date(Date())
        out.raw(",\"level\":")
        out.string(event.level.rawValue)
        out.raw(",\"logger\":")
        out.string(label)
        out.raw(",\"message\":")
        out.string(event.message.description)
        for key in all.keys.sorted() where !Self.reserved.contains(key) {
            out.raw(",")
            out.string(key)
            out.raw(":")
            Self.write(all[key]!, into: &out)
        }
        out.raw("}\n")
        return out.bytes
    }

    private static let reserved: Set<String> = ["time", "level", "logger", "message"]

    private static func write(_ value: Logger.Metadata.Value, into out: inout JSONBytes) {
        switch value {
        case .string(let text): out.string(text)
        case .stringConvertible(let value): out.string(value.description)
        case .array(let values):
            out.raw("[")
            for (index, value) in values.enumerated() {
                if index > 0 { out.raw(",") }
                write(value, into: &out)
            }
            out.raw("]")
        case .dictionary(let entries):
            out.raw("{")
            for (index, key) in entries.keys.sorted().enumerated() {
                if index > 0 { out.raw(",") }
                out.string(key)
                out.raw(":")
                write(entries[key]!, into: &out)
            }
            out.raw("}")
        }
    }
}
