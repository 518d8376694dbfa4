import NIOCore
import ServiceLifecycle
import Synchronization

/// Where every wait of the service comes from (no code sleeps otherwise, `CodeShapeTests`): the
/// request deadline, the pool's lease timeout, the payment adapter's attempt timeout and backoff,
/// the SMTP client's timeout, the sign-in gate's refusal delay and slowing, the live board's
/// interval and the periodic services' waits. The service uses `EventLoopTimers` (NIO's scheduled
/// tasks); tests use `ManualTimers`, which fire only when the test moves them, so no test waits on
/// the wall clock to prove a timeout.
package protocol Timers: Sendable {
    /// Runs `action` once `delay` has passed, unless the returned timer is cancelled first.
    func schedule(in delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer
}

/// A scheduled action that has not fired yet, or has.
package struct ScheduledTimer: Sendable {
    package let cancelAction: @Sendable () -> Void

    /// Stops the action from firing; nothing once it has fired.
    package func cancel() { cancelAction() }
}

extension Timers {
    /// Suspends for `delay` on these timers.
    /// - Throws: `CancellationError` when the task is cancelled first (the timer is cancelled too).
    package func sleep(for delay: Duration) async throws {
        guard delay > .zero else { return try Task.checkCancellation() }
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                sleeper.wait(continuation) { schedule(in: delay) { sleeper.finish(nil) } }
            }
        } onCancel: {
            sleeper.finish(CancellationError())
        }
    }
}

/// One `sleep`: resumed once, by its timer or by its task's cancellation, whichever is first.
private final class Sleeper: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, any Error>, ScheduledTimer)
        case done(CancellationError?)
    }
    private let state = Mutex(State.idle)

    package func wait(_ continuation: CheckedContinuation<Void, any Error>, schedule: () -> ScheduledTimer) {
        // Cancelled before it began: no timer is set at all.
        if case .some(let error) = state.withLock({ state -> CancellationError?? in
            if case .done(let error) = state { return .some(error) }
            return .none
        }) {
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            return
        }
        let timer = schedule()
        let early: CancellationError?? = state.withLock { state in
            guard case .done(let error) = state else {
                state = .waiting(continuation, timer)
                return .none
            }
            return .some(error)
        }
        guard case .some(let error) = early else { return }  // still waiting
        timer.cancel()
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }

    package func finish(_ error: CancellationError?) {
        let waiting = state.withLock { state -> (CheckedContinuation<Void, any Error>, ScheduledTimer)? in
            switch state {
            case .idle:
                state = .done(error)
                return nil
            case .waiting(let continuation, let timer):
                state = .done(error)
                return (continuation, timer)
            case .done: return nil
            }
        }
        guard let (continuation, timer) = waiting else { return }
        timer.cancel()
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}

/// The service's timers: NIO's scheduled tasks on the shared event loops.
package struct EventLoopTimers: Timers {
    package init() {}

    package func schedule(in delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let task = NIOSingletons.posixEventLoopGroup.any().scheduleTask(in: TimeAmount(delay), action)
        return ScheduledTimer { task.cancel() }
    }
}

/// Timers that fire only when `advance(by:)` moves them past their time: a test schedules work,
/// waits until its timers are set (`waitUntilScheduled`), then moves time at once.
package final class ManualTimers: Timers {
    private struct Entry {
        package let due: Duration
        package let action: @Sendable () -> Void
    }
    private struct State {
        package var now: Duration = .zero
        package var next = 0
        package var pending: [Int: Entry] = [:]
        package var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    package init() {}

    package func schedule(in delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let (id, ready) = state.withLock { state in
            let id = state.next
            state.next += 1
            state.pending[id] = Entry(due: state.now + delay, action: action)
            let count = state.pending.count
            let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
            state.watchers.removeAll { $0.count <= count }
            return (id, ready)
        }
        for watcher in ready { watcher.resume() }
        return ScheduledTimer { [self] in _ = state.withLock { $0.pending.removeValue(forKey: id) } }
    }

    /// Timers set and not yet fired or cancelled.
    package var pending: Int { state.withLock { $0.pending.count } }

    /// Returns once at least `count` timers are pending.
    package func waitUntilScheduled(_ count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard state.pending.count < count else { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Moves time forward by `delay`, firing (in time order, outside the lock) every timer due by then.
    package func advance(by delay: Duration) {
        let due = state.withLock { state -> [Entry] in
            state.now += delay
            let due = state.pending.filter { $0.value.due <= state.now }
            for id in due.keys { state.pending.removeValue(forKey: id) }
            return due.values.sorted { $0.due < $1.due }
        }
        for entry in due { entry.action() }
    }
}

/// Sleeps for `duration` on `timers`, returning early on graceful shutdown (a periodic service's wait).
package func gracefulShutdown(sleeping duration: Duration, on timers: any Timers = EventLoopTimers()) async throws {
    try await cancelWhenGracefulShutdown { try await timers.sleep(for: duration) }
}
