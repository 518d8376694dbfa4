import Foundation

/// Limits failed authentications per source address (`policies/security.yaml`): after `limit`
/// failures within `window`, every request from that address is refused (429 with Retry-After)
/// until the oldest failure leaves the window. Other addresses are not affected. In memory, per
/// process; bounded by forgetting addresses whose failures have all left the window.
actor AuthenticationThrottle {
    let limit: Int
    let window: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private var failures: [String: [ContinuousClock.Instant]] = [:]

    init(limit: Int, window: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.limit = limit
        self.window = window
        self.now = now
    }

    /// Seconds until `address` may try again, nil when it may now.
    func retryAfter(_ address: String) -> Int? {
        let current = now()
        guard var times = failures[address] else { return nil }
        times.removeAll { current - $0 >= window }
        failures[address] = times.isEmpty ? nil : times
        guard times.count >= limit, let oldest = times.first else { return nil }
        let wait = window - (current - oldest)
        return max(1, Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
    }

    /// Records one failed authentication from `address`.
    func recordFailure(_ address: String) {
        let current = now()
        failures[address, default: []].append(current)
        if failures.count > 10_000 {
            failures = failures.filter { _, times in times.last.map { current - $0 < window } ?? false }
        }
    }
}
