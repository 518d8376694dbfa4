import Foundation
import Logging

/// Log lines as text, one per line, on standard error (`LOG_FORMAT=text`, the default), in
/// swift-log's `StreamLogHandler` layout: `<time> <level> <label>: <key=value …> [<source>]
/// <message>`, the time in local time (`%Y-%m-%dT%H:%M:%S%z`), metadata sorted by key.
///
/// What differs is only the cost: each line is written with one `write(2)` (lines of concurrent
/// requests never interleave) instead of through the stdio stream's lock and flush, and the time
/// is read with `localtime_r`, which does not look at the time zone file again for every line as
/// `localtime` does.
public struct TextLogHandler: LogHandler {
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
        var line = Self.timestamp()
        line += " \(event.level)"
        if !label.isEmpty { line += " " + label }
        line += ":"
        let all = LogLine.metadata(of: event, handler: metadata, provider: metadataProvider)
        for (key, value) in all.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        write(Array(line.utf8))
    }

    /// Now in local time, as `StreamLogHandler` writes it.
    static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = strftime(buffer.baseAddress!, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: count), as: UTF8.self)
        }
    }
}
