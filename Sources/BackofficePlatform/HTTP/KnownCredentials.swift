import Synchronization

/// The credentials that authenticated lately (by their SHA-256, as the database keeps them),
/// so the failed-authentication throttle refuses the failures of an address without refusing
/// the credentials that work from it: an address over its limit is still answered for a token
/// known valid within `memory` (looked up as usual, so a token revoked since is refused), and
/// gets 429 without a lookup for anything else. In memory, per process, at most `capacity`
/// credentials (the oldest are forgotten first).
package final class KnownCredentials: Sendable {
    package let memory: Duration
    package let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let seen = Mutex<[[UInt8]: ContinuousClock.Instant]>([:])

    package init(
        memory: Duration = .seconds(600), capacity: Int = 10_000,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.memory = memory
        self.capacity = capacity
        self.now = now
    }

    /// Remembers that the credential whose hash is `hash` authenticated now.
    package func remember(_ hash: [UInt8]) {
        seen.withLock { seen in
            let current = now()
            seen[hash] = current
            guard seen.count > capacity else { return }
            seen = seen.filter { current - $0.value < memory }
            while seen.count > capacity, let oldest = seen.min(by: { $0.value < $1.value }) { seen[oldest.key] = nil }
        }
    }

    /// Whether the credential whose hash is `hash` authenticated within `memory`.
    package func contains(_ hash: [UInt8]) -> Bool {
        seen.withLock { seen in seen[hash].map { now() - $0 < memory } ?? false }
    }
}
