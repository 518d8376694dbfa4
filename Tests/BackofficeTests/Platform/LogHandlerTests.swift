import Foundation
import Logging
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Log handlers (pure)")
struct LogHandlerTests {
    /// Lines handed over by a handler, in order.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func take() -> [String] {
            lines.withLock { lines in
                defer { lines = [] }
                return lines
            }
        }
    }

    /// swift-log's own handler writing into `Lines`: the layout `TextLines` must keep.
    struct Stream: TextOutputStream, Sendable {
        let lines: Lines
        mutating func write(_ string: String) { lines.append(string) }
    }

    struct Refused: Error, CustomStringConvertible { var description: String { "card declined" } }

    /// Logs the same events through both handlers; the second element of each pair is the text handler's.
    static func bothWrite(label: String) -> [(reference: String, text: String)] {
        let reference = Lines()
        let text = Lines()
        let provider = Logger.MetadataProvider { ["trace": "t-1"] }
        var referenceLogger = Logger(label: label) { label in
            StreamLogHandler(label: label, stream: Stream(lines: reference), metadataProvider: provider)
        }
        var textLogger = Logger(label: label) { label in
            TextLogHandler(label: label, metadataProvider: provider) { bytes in
                text.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        referenceLogger[metadataKey: "request_id"] = "r-1"
        textLogger[metadataKey: "request_id"] = "r-1"
        referenceLogger.logLevel = .debug
        textLogger.logLevel = .debug
        for logger in [referenceLogger, textLogger] {
            logger.info(
                "GET /v1/orders 200",
                metadata: [
                    "status": .stringConvertible(200), "path": "/v1/orders", "actor": ["role": "partner_admin"],
                    "ids": ["a", "b"],
                ])
            logger.debug("plain")
            logger.warning("list", metadata: ["request_id": "overridden"])
            logger.error("payment refused", error: Refused())
            logger.trace("below the level: never written")
        }
        return Array(zip(reference.take(), text.take()))
    }

    @Test(
        """
        text lines are swift-log's StreamLogHandler lines, byte for byte: level, label, sorted metadata \
        (handler's, provider's, event's, an error's), source, message
        """
    )
    func textLayout() throws {
        for label in ["backoffice", ""] {
            var pairs = Self.bothWrite(label: label)
            // A second may tick over between the two handlers' lines: then once more.
            if pairs.contains(where: { $0.reference.prefix(24) != $0.text.prefix(24) }) {
                pairs = Self.bothWrite(label: label)
            }
            #expect(pairs.count == 4, "four events at or above the level, in both")
            for (reference, text) in pairs { #expect(text == reference) }
            let first = try #require(pairs.first?.text)
            #expect(first.hasSuffix(" [BackofficeTests] GET /v1/orders 200\n"))
            let metadata =
                #"""
                : actor=["role": "partner_admin"] ids=["a",\#
                 "b"] path=/v1/orders request_id=r-1 status=200 trace=t-1 [
                """#
            #expect(first.contains(metadata))
            #expect(pairs.last?.text.contains("error.message=card declined error.type=") == true)
        }
    }

    @Test("a text line starts with the local time to the second, with its offset")
    func textTime() throws {
        let lines = Lines()
        let logger = Logger(label: "t") { label in
            TextLogHandler(label: label) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        logger.info("x")
        let line = try #require(lines.take().first)
        #expect(line.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info t: \[\w+\] x\n/) != nil, "\(line)")
    }

    @Test("a JSON line carries an event's error as error.message and error.type")
    func jsonError() throws {
        let lines = Lines()
        let logger = Logger(label: "t") { label in
            JSONLogHandler(label: label) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        logger.error("payment refused", error: Refused())
        let line = try #require(lines.take().first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "payment refused")
        #expect(object["error.message"] as? String == "card declined")
        #expect((object["error.type"] as? String)?.hasSuffix("Refused") == true)
    }
}
