import BackofficePlatform
import Foundation
import Synchronization

/// Fails calls fast while the provider is down: closed (calls pass) → open after
/// `failureThreshold` failures in a row (calls refused for `cooldown`) → half-open (one trial
/// call; its success closes, its failure opens again).
package final class CircuitBreaker: Sendable {
    package enum State: String, Sendable { case closed, open, halfOpen = "half_open" }

    let failureThreshold: Int
    let cooldown: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex<(state: State, failures: Int, openedAt: ContinuousClock.Instant?)>((.closed, 0, nil))

    package init(
        failureThreshold: Int, cooldown: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.failureThreshold = failureThreshold
        self.cooldown = cooldown
        self.now = now
    }

    package var current: State { state.withLock { $0.state } }

    /// Whether a call would be admitted now (closed, or open with its cooldown over).
    var isAdmitting: Bool {
        let now = now()
        return state.withLock { value in
            switch value.state {
            case .closed: true
            case .halfOpen: false
            case .open: value.openedAt.map { now - $0 >= cooldown } ?? true
            }
        }
    }

    /// Publishes `state` on `/metrics` (`backoffice_payment_circuit_state`).
    private static func publish(_ state: State) {
        ServiceMetrics.paymentCircuit.record(state == .closed ? 0 : state == .halfOpen ? 1 : 2)
    }

    /// Refuses the call while open (`PaymentProviderError.unavailable("circuit open")`); lets one
    /// trial through once the cooldown has passed.
    func admit() throws {
        let now = now()
        try state.withLock { value in
            switch value.state {
            case .closed: return
            case .halfOpen: throw PaymentProviderError.unavailable("circuit open (a trial call is under way)")
            case .open:
                guard let opened = value.openedAt, now - opened >= cooldown else {
                    throw PaymentProviderError.unavailable("circuit open")
                }
                value.state = .halfOpen
                Self.publish(.halfOpen)
            }
        }
    }

    /// A call admitted and then cancelled before its verdict: a half-open circuit's trial is given
    /// back (open again, its cooldown already over, so the next call is the new trial); a closed
    /// circuit counts nothing.
    func abandon() {
        let state = state.withLock { value in
            if value.state == .halfOpen { value.state = .open }
            return value.state
        }
        Self.publish(state)
    }

    /// Records a call's end: a success closes the circuit; a failure counts, and opens it at the
    /// threshold (at once from half-open).
    func record(success: Bool) {
        let now = now()
        let state = state.withLock { value in
            if success {
                value = (.closed, 0, nil)
            } else {
                value.failures += 1
                if value.state == .halfOpen || value.failures >= failureThreshold {
                    value = (.open, value.failures, now)
                }
            }
            return value.state
        }
        Self.publish(state)
    }
}
