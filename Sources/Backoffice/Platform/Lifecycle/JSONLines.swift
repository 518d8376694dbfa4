import Foundation
import Logging

/// Log lines as JSON objects, one per line, on standard error (`LOG_FORMAT=json`): `time`
/// (RFC 3339, milliseconds, UTC), `level`, `logger` (the label), `message`, then every metadata
/// value under its own key (an event's error as `error.message` and `error.type`) — strings as strings, nested metadata as objects and lists as arrays.
/// A metadata key that names one of the first four is dropped rather than written twice.
///
/// Each line is written with one `write(2)`, so lines of concurrent requests never interleave.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable ([UInt8]) -> Void

    /// A handler for `label` writing to standard error.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, metadataProvider: metadataProvider, write: LogLine.toStandardError)
    }

    /// A handler for `label` that hands each line (with its newline) to `write`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable ([UInt8]) -> Void) {
        (self.label, self.metadataProvider, self.write) = (label, metadataProvider, write)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = LogLine.metadata(of: event, handler: metadata, provider: metadataProvider)
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
        write(out.bytes)
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
