import Foundation

/// Limits what one source address may do (`policies/security.yaml`): failed authentications,
/// and public submissions (shop applications). After `limit` events within `window`, every
/// request it governs from that address is refused (429 with Retry-After) until the oldest event
/// leaves the window. Other addresses are not affected. In memory, per process; bounded by
/// forgetting addresses whose events have all left the window.
actor AddressThrottle {
    let limit: Int
    let window: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private var events: [String: [ContinuousClock.Instant]] = [:]

    init(limit: Int, window: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.limit = limit
        self.window = window
        self.now = now
    }

    /// Seconds until `address` may try again, nil when it may now.
    func retryAfter(_ address: String) -> Int? {
        let current = now()
        guard var times = events[address] else { return nil }
        times.removeAll { current - $0 >= window }
        events[address] = times.isEmpty ? nil : times
        guard times.count >= limit, let oldest = times.first else { return nil }
        let wait = window - (current - oldest)
        return max(1, Int(wait.inSeconds.rounded(.up)))
    }

    /// Admits one event from `address` and records it, in one step (concurrent requests cannot
    /// all pass the check before any is counted); the seconds to wait instead when over the limit.
    func admit(_ address: String) -> Int? {
        if let wait = retryAfter(address) { return wait }
        record(address)
        return nil
    }

    /// Records one event (a failed authentication, a submission) from `address`.
    func record(_ address: String) {
        let current = now()
        events[address, default: []].append(current)
        if events.count > 10_000 {
            events = events.filter { _, times in times.last.map { current - $0 < window } ?? false }
        }
    }
}
