import Foundation
import Logging

/// How a log line is laid out: `TextLines` (`LOG_FORMAT=text`, the default) or `JSONLines`.
package protocol LogLineLayout: Sendable {
    /// The whole line for `event` of the logger `label`, newline included; `metadata` is all the
    /// line carries (`LineLogHandler` merges it).
    static func line(for event: LogEvent, label: String, metadata: Logger.Metadata) -> [UInt8]
}

/// Lines as text, in swift-log's `StreamLogHandler` layout (`TextLines`).
package typealias TextLogHandler = LineLogHandler<TextLines>
/// Lines as JSON objects (`JSONLines`).
package typealias JSONLogHandler = LineLogHandler<JSONLines>

/// The service's log handler: each event one line, laid out by `Layout`, on standard error.
///
/// A line carries the handler's metadata, then the provider's, then the event's (each overriding
/// the last), then — when the event carries an error — `error.message` and `error.type`, as
/// swift-log's own handler adds them. Each line is written with one `write(2)` (repeated only for
/// a partial write), so lines of concurrent requests never interleave and no stdio lock or flush
/// is taken.
package struct LineLogHandler<Layout: LogLineLayout>: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable ([UInt8]) -> Void

    /// A handler for `label` writing to standard error.
    package init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, metadataProvider: metadataProvider, write: Self.toStandardError)
    }

    /// A handler for `label` that hands each line (with its newline) to `write`.
    package init(
        label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable ([UInt8]) -> Void
    ) {
        (self.label, self.metadataProvider, self.write) = (label, metadataProvider, write)
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        write(Layout.line(for: event, label: label, metadata: all))
    }

    @Sendable private static func toStandardError(_ line: [UInt8]) {
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
