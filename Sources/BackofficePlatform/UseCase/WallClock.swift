import Foundation

/// Where units of work take "now" from. The service uses `SystemWallClock`; tests use a
/// `ManualWallClock` and move it, so time-dependent rules (timed locks, challenge windows,
/// webhook tolerances) are tested without sleeping.
package protocol WallClock: Sendable {
    func now() -> Date
}

/// The machine's clock, in whole microseconds (`Date.atDatabasePrecision`).
package struct SystemWallClock: WallClock {
    package init() {}
    package func now() -> Date { Date().atDatabasePrecision }
}

extension Date {
    /// This instant in whole microseconds since 2000-01-01, computed as PostgreSQL's `timestamptz`
    /// is decoded: an instant a clock gives, stored and read back, is never later than itself
    /// (a message published "now" read back as scheduled a fraction of a microsecond ahead).
    package var atDatabasePrecision: Date {
        let start = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01T00:00:00Z
        let microseconds = (timeIntervalSince(start) * 1_000_000).rounded(.down)
        return Date(timeInterval: microseconds / 1_000_000, since: start)
    }
}

/// A clock that stands still until told to move (in whole microseconds, as `SystemWallClock`).
package final class ManualWallClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    package init(_ start: Date = Date()) { current = start }

    package func now() -> Date { lock.withLock { current.atDatabasePrecision } }

    /// Moves the clock forward (or back, for a negative interval).
    package func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// Where new row ids come from: random v4 UUIDs in the service, a predictable sequence in tests
/// that need one.
package struct IDGenerator: Sendable {
    private let make: @Sendable () -> UUID

    package init(_ make: @escaping @Sendable () -> UUID) { self.make = make }

    package static let random = IDGenerator { UUID() }

    package func next() -> UUID { make() }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    package var inSeconds: TimeInterval { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension Calendar {
    /// The Gregorian calendar in UTC: calendar days and years are UTC's.
    package static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
