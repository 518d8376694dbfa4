import Foundation
import Logging

/// What the service's log handlers share: the metadata a line carries and the one write that
/// puts it on standard error.
enum LogLine {
    /// The handler's own metadata, then the provider's, then the event's (each overriding the
    /// last), then — when the event carries an error — `error.message` and `error.type`, as
    /// swift-log's `StreamLogHandler` adds them.
    static func metadata(of event: LogEvent, handler: Logger.Metadata, provider: Logger.MetadataProvider?) -> Logger.Metadata {
        var all = handler
        if let provided = provider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        return all
    }

    /// Writes `line` to standard error with `write(2)` (repeated only for a partial write), so
    /// lines of concurrent requests never interleave and no stdio lock or flush is taken.
    @Sendable static func toStandardError(_ line: [UInt8]) {
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
