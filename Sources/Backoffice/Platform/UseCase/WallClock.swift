import Foundation

/// Where units of work take "now" from. The service uses `SystemWallClock`; tests use a
/// `ManualWallClock` and move it, so time-dependent rules (timed locks, challenge windows,
/// webhook tolerances) are tested without sleeping.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The machine's clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that stands still until told to move.
public final class ManualWallClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date()) { current = start }

    public func now() -> Date { lock.withLock { current } }

    /// Moves the clock forward (or back, for a negative interval).
    public func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// Where new row ids come from: random v4 UUIDs in the service, a predictable sequence in tests
/// that need one.
public struct IDGenerator: Sendable {
    private let make: @Sendable () -> UUID

    public init(_ make: @escaping @Sendable () -> UUID) { self.make = make }

    public static let random = IDGenerator { UUID() }

    public func next() -> UUID { make() }
}
