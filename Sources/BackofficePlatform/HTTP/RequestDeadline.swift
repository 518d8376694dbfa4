import NIOCore
import NIOPosix
import PostgresNIO
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
///
/// A 503 by the deadline means nothing was changed: the work's transactions commit only after
/// claiming the commit (`claimCommit()`), which fails once the request has been answered (the
/// transaction is rolled back instead) and, once claimed, holds the deadline's answer back until
/// the commit is over (the work answers, with what it committed).
///
/// A connection that closes under the work (`ConnectionWatch`) answers 503 at once, a commit under
/// way or not (until one took effect): whether a commit in flight took effect is then unknown, as
/// with any connection lost, and a retry with the same `Idempotency-Key` answers what happened.
package enum RequestDeadline {
    /// The request work the current task runs, if any.
    @TaskLocal package static var work: (any RequestWork)?

    /// Runs `work` as request work of its own (`run(within:timers:_:)`), not bound to the caller's
    /// answer: it is neither cancelled nor refused its commit when the caller's request has been
    /// answered, yet it answers within `limit`, and at once (503) when its connection closes
    /// under it. For what must be recorded once a call outside has been made (a staged
    /// operation's verdict): on a 503 nothing was recorded, or whether the commit took effect is
    /// unknown, and the operation's retry or reconciliation finishes it.
    package static func runOnItsOwn<T: Sendable>(
        within limit: Duration, timers: any Timers, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await Task { try await run(within: limit, timers: timers, work) }.value
    }

    /// Runs `work` on `connection` as request work of its own (`run(within:timers:_:)`), the
    /// connection watched for it (`ConnectionWatch`): answered within `limit`, and at once
    /// (`DomainError.unavailable`) when the connection closes under it. For a statement after a
    /// commit took effect, which the request's own work no longer bounds. A statement still
    /// running at `limit` closes the connection (the pool replaces it), so that it never runs on
    /// under another lease.
    package static func watching<T: Sendable>(
        _ connection: PostgresConnection, within limit: Duration, timers: any Timers,
        _ work: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            return try await run(within: limit, timers: timers) {
                let hold = RequestDeadline.work.map { ConnectionWatch.shared.hold(connection, for: $0) }
                defer { hold.map { ConnectionWatch.shared.release(connection, $0) } }
                return try await work(connection)
            }
        } catch DomainError.unavailable {
            if !connection.isClosed { try? await connection.close() }
            throw DomainError.unavailable
        }
    }

    package static func run<T: Sendable>(
        within limit: Duration, timers: any Timers, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let handle = WorkHandle<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                handle.await(continuation)
                let timer = timers.schedule(in: limit) { handle.expire() }
                handle.start(
                    Task {
                        let result: Result<T, any Error>
                        do {
                            result = .success(try await RequestDeadline.$work.withValue(handle) { try await work() })
                        } catch {
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
package protocol RequestWork: Sendable {
    /// True until the request has its answer.
    var isRunning: Bool { get }
    /// Answers the request 503 (`DomainError.unavailable`) now, unless it has its answer or a
    /// commit is under way (claimed), and cancels the work.
    func expire()
    /// Claims the right to commit: false once the request has been answered (the caller rolls
    /// back). Until `commitEnded()`, the deadline does not answer: its 503 is never sent for work
    /// that may be committing (only a lost connection's is, `connectionLost()`).
    func claimCommit() -> Bool
    /// The claimed commit is over (committed or failed); the deadline may answer again.
    func commitEnded()
    /// A commit of the work took effect: from now on a lost connection does not answer the request
    /// (the work answers, with what it committed).
    func committed()
    /// The work's database connection closed under it: answers the request 503 now, unless it has
    /// its answer or committed already, even during a commit (whose outcome is then unknown), and
    /// cancels the work.
    func connectionLost()
}

extension RequestDeadline {
    /// Runs `commit` for the current request's work once it claims the commit, then `after` (what
    /// follows a commit that took effect, bounded on its own: the replica fence) still under the
    /// claim, so the deadline never answers 503 for a committed change; without request work (a
    /// background service, the CLI) it just runs them.
    /// - Throws: `DomainError.unavailable`, without running `commit`, when the request has been
    ///   answered already (503 by its deadline): the caller rolls back.
    package static func committing<T>(_ commit: () async throws -> T, then after: () async -> Void = {})
        async throws -> T
    {
        guard let work else {
            let result = try await commit()
            await after()
            return result
        }
        guard work.claimCommit() else { throw DomainError.unavailable }
        defer { work.commitEnded() }
        let result = try await commit()
        work.committed()
        // Still claimed: the deadline does not answer 503 for what was committed.
        await after()
        return result
    }
}

/// The one answer of a `RequestDeadline` run (the work's or the deadline's, whichever comes
/// first) and the work's task.
private final class WorkHandle<T: Sendable>: RequestWork {
    private struct State {
        package var waiter: CheckedContinuation<T, any Error>?
        package var work: Task<Void, Never>?
        package var cancelled = false
        /// Commits claimed and not yet over: the deadline does not answer during them.
        package var committing = 0
        /// Whether a commit took effect: a lost connection no longer answers.
        package var committed = false
    }
    private let state = Mutex(State())

    package func await(_ continuation: CheckedContinuation<T, any Error>) {
        state.withLock { $0.waiter = continuation }
    }

    package func start(_ work: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.work = work
            return state.cancelled
        }
        if cancelled { work.cancel() }
    }

    /// Gives `result` to the caller unless it already has an answer; true when this was it.
    @discardableResult
    package func answer(_ result: Result<T, any Error>) -> Bool {
        guard
            let waiter = state.withLock({ state in
                defer { state.waiter = nil }; return state.waiter
            })
        else { return false }
        waiter.resume(with: result)
        return true
    }

    package var isRunning: Bool { state.withLock { $0.waiter != nil } }

    package func expire() {
        // Taken in the same lock as a commit's claim: never both.
        let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard state.committing == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        guard let waiter else { return }
        waiter.resume(throwing: DomainError.unavailable)
        cancel()
    }

    package func committed() {
        state.withLock { $0.committed = true }
    }

    package func connectionLost() {
        let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard !state.committed else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        guard let waiter else { return }
        waiter.resume(throwing: DomainError.unavailable)
        cancel()
    }

    package func claimCommit() -> Bool {
        state.withLock { state in
            guard state.waiter != nil else { return false }
            state.committing += 1
            return true
        }
    }

    package func commitEnded() {
        // A deadline that passed during the commit does not answer afterwards: what was committed
        // is the work's own answer to give, and it is on its way.
        state.withLock { $0.committing -= 1 }
    }

    package func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }
}
