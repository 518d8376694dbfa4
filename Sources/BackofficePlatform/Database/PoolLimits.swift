import Foundation
import NIOCore
import PostgresNIO
import Synchronization

/// How long the service waits for PostgreSQL, so that an outage or a hung statement answers 503
/// within a bounded time instead of holding requests (and connections) indefinitely.
package struct PoolLimits: Sendable {
    /// Connections the pool may open: by default `PoolLimits.suggestedConnections`.
    package var maximumConnections = PoolLimits.suggestedConnections
    /// Longest wait for a pooled connection: when none comes (the database is down, or every
    /// connection is busy) the request fails with `DomainError.unavailable` (503, `Retry-After`).
    package var leaseTimeout: Duration = .seconds(5)
    /// Longest wait to open a new connection.
    package var connectTimeout: Duration = .seconds(2)
    /// PostgreSQL's `statement_timeout` for every statement of the service (a statement waiting
    /// on a lock included): a cancelled statement is `DomainError.timedOut` (503).
    package var statementTimeout: Duration = .seconds(30)
    /// What keeps the lease timeouts and request deadlines: NIO's scheduled tasks in the service,
    /// `ManualTimers` in tests that prove a timeout without waiting for it.
    package var timers: any Timers = EventLoopTimers()

    package init() {}

    /// Twice this host's cores plus one: PostgreSQL's own rule for a pool's size, (cores × 2) +
    /// spindles, with this host's cores standing in for the database host's. The cores are NIO's
    /// count, which sizes the event loops too and honours a container's CPU quota. A connection beyond
    /// what the database can run at once adds no throughput; it moves the queue from the pool,
    /// which serves waiters first come first served, into PostgreSQL, where runnable backends
    /// share the cores and a page waits behind whichever ones the scheduler picks (measured on a
    /// 2-core host with 16 concurrent page requests: p99 16–22 ms with 4–6 connections, 24–37 ms
    /// with 12–20, at the same throughput).
    package static var suggestedConnections: Int { 2 * NIOCore.System.coreCount + 1 }

    /// Longest a request's database work may take before it is answered 503 (`RequestDeadline`):
    /// the lease timeout and two statement timeouts.
    package var requestDeadline: Duration { leaseTimeout + statementTimeout * 2 }
    /// The same for a bulk upload (goods import, an activity batch): ten statement timeouts.
    package var bulkRequestDeadline: Duration { leaseTimeout + statementTimeout * 10 }

    /// Whole milliseconds of `duration`, as PostgreSQL settings take them.
    package static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

extension PostgresClient {
    /// Leases a connection within `timeout` and runs `body` on it, however long `body` takes. The
    /// connection goes back to the pool only when `body` has ended (a cancelled task's included);
    /// a lease that does not come in time is given up (the pool forgets the request) and `body`
    /// never runs.
    ///
    /// While a request's work holds the connection (a lease that ends the request when late), its
    /// closing answers the request (`ConnectionWatch`); a lease the caller recovers from (a replica
    /// read the primary takes over) is not watched, so that its failure stays the caller's to handle.
    ///
    /// Inside a request's work (`RequestDeadline.run`) the wait is bounded by that work's own
    /// expiry: when the lease is late, the request is answered 503 at once and its work, a task
    /// of its own that nothing else shares, is cancelled, which withdraws the lease. Elsewhere
    /// (background services, the CLI), or when the caller recovers from a late lease
    /// (`lateLeaseEndsRequest` false: a read that the primary answers when the replica cannot),
    /// the caller's task must go on, so the lease is taken by a child task while a timer
    /// keeps the time.
    /// - Throws: `DomainError.unavailable` when no connection came within `timeout`; the pool's
    ///   own error when leasing failed.
    package func withConnection<T: Sendable>(
        within timeout: Duration, timers: any Timers, lateLeaseEndsRequest: Bool = true,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        ServiceMetrics.poolWaiting.increment()
        var waiting = true
        func waited() {
            if waiting { ServiceMetrics.poolWaiting.decrement() }
            waiting = false
        }
        guard lateLeaseEndsRequest, let work = RequestDeadline.work, work.isRunning else {
            return try await withConnectionKeepingTime(timeout, timers: timers, waited: waited, body)
        }
        let outcome = LeaseOutcome()
        let timer = timers.schedule(in: timeout) {
            guard outcome.settle(.expired) == .expired else { return }
            ServiceMetrics.leaseTimeouts.increment()
            work.expire()
        }
        do {
            return try await withConnection { connection in
                timer.cancel()
                waited()
                // Too late: the request was answered 503 (by this lease's timer, the request's
                // deadline or its cancellation), and nothing may run for it.
                guard work.isRunning, !Task.isCancelled, outcome.settle(.leased) == .leased else {
                    throw DomainError.unavailable
                }
                ServiceMetrics.poolInUse.increment()
                let hold = ConnectionWatch.shared.hold(connection, for: work)
                defer {
                    ConnectionWatch.shared.release(connection, hold)
                    ServiceMetrics.poolInUse.decrement()
                }
                return try await body(connection)
            }
        } catch {
            timer.cancel()
            waited()
            // After an expiry, whatever the withdrawn lease threw (a cancellation) is the 503 already answered.
            throw outcome.settle(.failed) == .expired ? DomainError.unavailable : error
        }
    }

    /// The lease of `withConnection(within:timers:lateLeaseEndsRequest:_:)` outside a request's work: a child
    /// task holds the lease until `body` ends while a timer keeps the time; `waited` is called once the wait
    /// is over.
    private func withConnectionKeepingTime<T: Sendable>(
        _ timeout: Duration, timers: any Timers, waited: () -> Void, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let (leases, offer) = AsyncThrowingStream<PostgresConnection, any Error>.makeStream()
        let done = Latch()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await self.withConnection { connection in
                        offer.yield(connection)
                        await done.wait()
                    }
                } catch {
                    offer.finish(throwing: error)
                }
            }
            let timer = timers.schedule(in: timeout) {
                ServiceMetrics.leaseTimeouts.increment()
                offer.finish(throwing: DomainError.unavailable)
            }
            defer {
                timer.cancel()
                done.open()
                group.cancelAll()  // a lease still waited for is given up
            }
            var iterator = leases.makeAsyncIterator()
            let leased: PostgresConnection?
            do { leased = try await iterator.next() } catch {
                waited()
                throw error
            }
            waited()
            timer.cancel()
            guard let connection = leased else { throw DomainError.unavailable }
            ServiceMetrics.poolInUse.increment()
            defer { ServiceMetrics.poolInUse.decrement() }
            return try await body(connection)
        }
    }
}

/// How a lease within a request's work ended, settled once: whichever of the connection, the
/// timer or a failure comes first decides, and the others learn that they came too late.
package final class LeaseOutcome: Sendable {
    package enum Settlement { case leased, expired, failed }
    private let settled = Mutex<Settlement?>(nil)

    /// Settles the lease as `settlement` unless it is settled already; the settlement in force.
    package func settle(_ settlement: Settlement) -> Settlement {
        settled.withLock { settled in
            if let settled { return settled }
            settled = settlement
            return settlement
        }
    }
}

/// A one-way gate that ignores task cancellation: `wait()` returns once `open()` was called.
package final class Latch: Sendable {
    private let state = Mutex<(isOpen: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    package func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state in
                if state.isOpen { return true }
                state.waiter = continuation
                return false
            }
            if openAlready { continuation.resume() }
        }
    }

    func open() {
        let waiter = state.withLock { state in
            state.isOpen = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
