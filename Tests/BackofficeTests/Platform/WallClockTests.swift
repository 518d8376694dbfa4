import Foundation
import NIOCore
import PostgresNIO
import Testing

@testable import Backoffice

@Suite("Clocks give instants PostgreSQL stores exactly")
struct WallClockTests {
    /// `date` stored as timestamptz and read back, as postgres-nio encodes and decodes it.
    func roundTrip(_ date: Date) throws -> Date {
        var buffer = ByteBuffer()
        date.encode(into: &buffer, context: .default)
        return try Date(from: &buffer, type: .timestamptz, format: .binary, context: .default)
    }

    @Test("an instant from a clock, stored and read back, is never later than itself (a message published now never reads back as scheduled)")
    func neverLaterAfterStoring() throws {
        var generator = SystemRandomNumberGenerator()
        var rawLater = 0
        for _ in 0..<100_000 {
            let instant = Date(timeIntervalSinceReferenceDate: Double.random(in: 8e8...9e8, using: &generator))
            if try roundTrip(instant) > instant { rawLater += 1 }
            let clocked = instant.atDatabasePrecision
            let stored = try roundTrip(clocked)
            #expect(stored <= clocked)
            #expect(clocked.timeIntervalSince(stored) < 0.000_002, "at most a microsecond apart")
        }
        #expect(rawLater > 0, "a raw Date does come back later sometimes: the case the clocks exist to avoid")
    }
}
