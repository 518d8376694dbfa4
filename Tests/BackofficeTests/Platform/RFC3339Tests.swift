import BackofficeAPI
import Foundation
import Testing

@testable import BackofficePlatform

@Suite("RFC 3339 times (pure)")
struct RFC3339Tests {
    @Test(
        """
        the fast reader agrees with Foundation's to the microsecond, keeps the written millisecond, and refuses \
        what is not a calendar time
        """
    )
    func reader() throws {
        let transcoder = RFC3339DateTranscoder()
        for text in [
            "2026-11-23T10:24:44.909Z", "2026-11-23T10:24:44Z", "2024-02-29T23:59:59.999999Z",
            "1999-12-31T23:00:00+01:00",
            "2026-06-30T12:00:00.5-07:30", "1970-01-01T00:00:00Z", "2100-03-01T00:00:00.123Z",
        ] {
            let fast = try #require(RFC3339DateTranscoder.parse(text), "\(text)")
            let foundation = try Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            #expect(abs(fast.timeIntervalSince(foundation)) < 1e-6, "\(text)")
            if text.hasSuffix("Z"), text.count == 24 {
                #expect(RFC3339DateTranscoder.format(fast) == text, "prints as written")
            }
        }
        #expect(
            RFC3339DateTranscoder.parse("2026-11-23t10:24:44z") == RFC3339DateTranscoder.parse("2026-11-23T10:24:44Z"),
            "RFC 3339 allows t and z")
        for bad in [
            "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-23T24:00:00Z",
            "2026-11-23T10:60:00Z",
            "2026-11-23 10:24:44Z", "2026-11-23T10:24:44", "2026-11-23T10:24:44.Z", "2026-11-23T10:24:44+0100",
            "x026-11-23T10:24:44Z",
        ] {
            #expect(RFC3339DateTranscoder.parse(bad) == nil, "\(bad)")
        }
        #expect(throws: (any Error).self, "Foundation rolls this over to 2 March; it is refused") {
            try transcoder.decode("2026-02-30T00:00:00Z")
        }
    }
}
