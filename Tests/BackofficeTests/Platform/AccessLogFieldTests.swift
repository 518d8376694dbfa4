import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The access log's fields (pure)")
struct AccessLogFieldTests {
    @Test("duration_ms is milliseconds with three decimals, zero-padded")
    func durationMilliseconds() {
        #expect(Duration.microseconds(3_214).millisecondsText == "3.214")
        #expect(Duration.microseconds(7).millisecondsText == "0.007")
        #expect(Duration.microseconds(12_050).millisecondsText == "12.050")
        #expect(Duration.nanoseconds(2_500_999_999).millisecondsText == "2500.999")
        #expect(Duration.zero.millisecondsText == "0.000")
    }
}
