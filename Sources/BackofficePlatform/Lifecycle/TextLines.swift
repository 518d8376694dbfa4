import Foundation
import Logging

/// Text lines (`LOG_FORMAT=text`, the default) in swift-log's `StreamLogHandler` layout, byte for
/// byte: `<time> <level> <label>: <key=value …> [<source>] <message>`, the time in local time
/// (`%Y-%m-%dT%H:%M:%S%z`), metadata sorted by key.
///
/// Only the cost differs: the time is read with `localtime_r`, which does not look at the time
/// zone file again for every line as `localtime` does (and `LineLogHandler` writes the line
/// without the stdio stream's lock and flush).
package enum TextLines: LogLineLayout {
    package static func line(for event: LogEvent, label: String, metadata: Logger.Metadata) -> [UInt8] {
        var line = timestamp()
        line += " \(event.level)"
        if !label.isEmpty { line += " " + label }
        line += ":"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        return Array(line.utf8)
    }

    /// Now in local time, as `StreamLogHandler` writes it.
    package static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = strftime(buffer.baseAddress!, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: count), as: UTF8.self)
        }
    }
}
