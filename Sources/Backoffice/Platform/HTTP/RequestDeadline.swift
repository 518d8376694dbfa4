import NIOCore
import NIOPosix
import Synchronization

/// A request's database work answered within a bound, whatever happens to the work: the work runs
/// as a task of its own, and when it has not answered by the deadline the caller gets
/// `DomainError.unavailable` (503, `Retry-After`) and the work is cancelled and left to end on its
/// own. The bound exists because PostgresNIO never answers a statement written to a connection
/// PostgreSQL has just closed (a restart under load leaves such a statement waiting forever); the
/// closed-connection checks before each statement narrow that race, and this ends it.
///
/// Inside the work, `RequestDeadline.work` is the work itself: what waits on a bound of its own
/// (the pool's lease) ends the request early with `expire()` instead of keeping time in tasks of
/// its own.
enum RequestDeadline {
    /// The request work the current task runs, if any.
    @TaskLocal static var work: (any RequestWork)?

    static func run<T: Sendable>(within limit: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let handle = WorkHandle<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                handle.await(continuation)
                let timer = NIOSingletons.posixEventLoopGroup.any().scheduleTask(in: TimeAmount(limit)) { handle.expire() }
                handle.start(
                    Task {
                        let result: Result<T, any Error>
                        do { result = .success(try await RequestDeadline.$work.withValue(handle) { try await work() }) } catch {
                            result = .failure(error)
                        }
                        timer.cancel()
                        handle.answer(result)
                    })
            }
        } onCancel: {
            handle.cancel()
        }
    }
}

/// A request's work as what it runs sees it.
protocol RequestWork: Sendable {
    /// True until the request has its answer.
    var isRunning: Bool { get }
    /// Answers the request 503 (`DomainError.unavailable`) now, unless it has its answer, and
    /// cancels the work.
    func expire()
}

/// The one answer of a `RequestDeadline` run (the work's or the deadline's, whichever comes
/// first) and the work's task.
private final class WorkHandle<T: Sendable>: RequestWork {
    private let state = Mutex<(waiter: CheckedContinuation<T, any Error>?, work: Task<Void, Never>?, cancelled: Bool)>((nil, nil, false))

    func await(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.waiter = continuation } }

    func start(_ work: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.work = work
            return state.cancelled
        }
        if cancelled { work.cancel() }
    }

    /// Gives `result` to the caller unless it already has an answer; true when this was it.
    @discardableResult
    func answer(_ result: Result<T, any Error>) -> Bool {
        guard
            let waiter = state.withLock({ state in
                defer { state.waiter = nil }; return state.waiter
            })
        else { return false }
        waiter.resume(with: result)
        return true
    }

    var isRunning: Bool { state.withLock { $0.waiter != nil } }

    func expire() {
        if answer(.failure(DomainError.unavailable)) { cancel() }
    }

    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }
}
