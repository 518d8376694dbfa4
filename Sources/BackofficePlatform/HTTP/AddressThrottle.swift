import Foundation
import Synchronization

/// Limits what one source address may do (`policies/security.yaml`): failed authentications,
/// and public submissions (shop applications). After `limit` events within `window`, every
/// request it governs from that address is refused (429 with Retry-After) until the oldest event
/// leaves the window. Other addresses are not affected. In memory, per process; bounded by
/// forgetting addresses whose events have all left the window. Every request asks it, so it is a
/// lock around a dictionary, held for a lookup, not an actor a request would hop to and back.
package final class AddressThrottle: Sendable {
    package let limit: Int
    package let window: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let events = Mutex<[String: [ContinuousClock.Instant]]>([:])

    package init(
        limit: Int, window: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.limit = limit
        self.window = window
        self.now = now
    }

    /// Seconds until `address` may try again, nil when it may now.
    package func retryAfter(_ address: String) -> Int? {
        events.withLock { retryAfter(address, at: now(), in: &$0) }
    }

    /// Admits one event from `address` and records it, in one step (concurrent requests cannot
    /// all pass the check before any is counted); the seconds to wait instead when over the limit.
    package func admit(_ address: String) -> Int? {
        events.withLock { events in
            let current = now()  // read under the lock: each address's times stay in order
            if let wait = retryAfter(address, at: current, in: &events) { return wait }
            record(address, at: current, in: &events)
            return nil
        }
    }

    /// Records one event (a failed authentication, a submission) from `address`.
    package func record(_ address: String) {
        events.withLock { record(address, at: now(), in: &$0) }
    }

    private func retryAfter(
        _ address: String, at current: ContinuousClock.Instant, in events: inout [String: [ContinuousClock.Instant]]
    ) -> Int? {
        guard var times = events[address] else { return nil }
        times.removeAll { current - $0 >= window }
        events[address] = times.isEmpty ? nil : times
        guard times.count >= limit, let oldest = times.first else { return nil }
        let wait = window - (current - oldest)
        return max(1, Int(wait.inSeconds.rounded(.up)))
    }

    private func record(
        _ address: String, at current: ContinuousClock.Instant, in events: inout [String: [ContinuousClock.Instant]]
    ) {
        events[address, default: []].append(current)
        if events.count > 10_000 {
            events = events.filter { _, times in times.last.map { current - $0 < window } ?? false }
        }
    }
}
