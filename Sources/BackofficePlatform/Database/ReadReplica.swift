import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A PostgreSQL write-ahead log position (`pg_lsn`, written `16/B374D848`).
package struct LSN: Comparable, Hashable, Sendable, CustomStringConvertible {
    package let value: UInt64

    package init(_ value: UInt64) { self.value = value }

    /// Parses PostgreSQL's text form; nil for anything else.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, parts.allSatisfy({ (1...8).contains($0.count) }),
            let high = UInt64(parts[0], radix: 16),
            let low = UInt64(parts[1], radix: 16)
        else { return nil }
        value = high << 32 | low
    }

    package var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }
    package static func < (lhs: LSN, rhs: LSN) -> Bool { lhs.value < rhs.value }
}

/// Where one change committed in the primary's log (set after the commit, when a replica is in use).
package final class CommittedPosition: Sendable {
    private let lsn = Mutex<LSN?>(nil)
    package init() {}
    package var value: LSN? { lsn.withLock { $0 } }
    package func record(_ position: LSN) { lsn.withLock { $0 = position } }
}

/// A streaming replica of the primary that lag-tolerant reads go to (`BACKOFFICE_READ_DATABASE_URL`).
///
/// Guarantees:
/// - only reads the contract marks lag-tolerant (`x-read-replica`: lists, exports, the catalog,
///   leaderboards, the audit list) may go to the replica; every change, and every read inside
///   one, goes to the primary;
/// - a read goes to the replica only when its last check succeeded, it lags less than `maxLag`,
///   and it has replayed the client's own last change: the last commit made with the same token
///   in this process (one whose position could not be read keeps its reads on the primary until
///   a later check places it), or the position the client names (`Backoffice-Read-After`, which
///   a change's answer carries when its position was read), so a client reads its own writes;
/// - a read made with a credential the primary refused lately (a token revoked, or its operator
///   disabled, within twice the maximum lag and ten minutes, counted from the refusing transaction's
///   start) goes to the primary, which refuses it: each check
///   asks the primary for them (`recently_refused_credentials`), so a replica that has not yet
///   replayed a revocation never lets its credential through for longer than one check interval;
///   and no read goes to the replica when its last successful check is older than `maxLag`;
/// - a read the replica fails (down, restarting, no connection within `leaseTimeout`) is
///   answered by the primary, and the replica is not used again until a check succeeds.
package final class ReadReplica: Sendable {
    package let client: PostgresClient
    package let maxLag: Duration
    /// The longest a read waits for a replica connection before the primary answers it instead.
    package let leaseTimeout: Duration
    package let checkInterval: Duration
    package let logger: Logger
    private let state = Mutex(State())

    package struct State {
        package var up = false
        package var replayed: LSN?
        package var lagSeconds = 0.0
        /// Each token's last commit position, until the replica has replayed it.
        package var fences: [[UInt8]: LSN] = [:]
        /// The tokens whose last commit's position could not be read, with when it committed: their
        /// reads stay on the primary until a check begun after it places it (`placeUnknownFences`).
        package var unknownFences: [[UInt8]: ContinuousClock.Instant] = [:]
        /// The credentials (token hashes) the primary refused lately, as of the last check.
        package var refused: Set<[UInt8]> = []
        /// When the last check succeeded.
        package var checkedAt: ContinuousClock.Instant?
        /// Where the primary's log was at recent checks, oldest first: the replica's lag is how
        /// long ago the primary was where the replica is now.
        package var primaryHistory: [(at: ContinuousClock.Instant, lsn: LSN)] = []
    }

    /// Where one read goes, and why not to the replica.
    package enum Route: Equatable, Sendable {
        case replica
        case primary(because: String)
    }

    package init(
        client: PostgresClient, maxLag: Duration = .seconds(5), leaseTimeout: Duration = .seconds(1),
        checkInterval: Duration = .seconds(1),
        logger: Logger
    ) {
        (self.client, self.maxLag, self.leaseTimeout, self.checkInterval, self.logger) = (
            client, maxLag, leaseTimeout, checkInterval, logger
        )
    }

    /// Where a lag-tolerant read made with `token` (its SHA-256) should go.
    package func route(token: [UInt8], readAfter: LSN?) -> Route {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard state.up, let replayed = state.replayed else { return .primary(because: "down") }
            guard let checkedAt = state.checkedAt, now - checkedAt < maxLag else {
                return .primary(because: "unchecked")
            }
            guard !state.refused.contains(token) else { return .primary(because: "credential_refused") }
            guard state.lagSeconds < maxLag.inSeconds else { return .primary(because: "lagging") }
            if let fence = [state.fences[token], readAfter].compactMap({ $0 }).max(), replayed < fence {
                return .primary(because: "read_your_writes")
            }
            if state.unknownFences[token] != nil { return .primary(because: "read_your_writes") }
            return .replica
        }
    }

    /// Remembers that `token` committed a change at `lsn`: its reads go to the primary until the
    /// replica has replayed it.
    package func wrote(token: [UInt8], at lsn: LSN) {
        state.withLock { state in
            // bounded; a lost fence only costs a primary read… of an old write
            if state.fences.count >= 100_000 { state.fences.removeAll() }
            if let replayed = state.replayed, replayed >= lsn { return }
            state.fences[token] = max(state.fences[token] ?? lsn, lsn)
        }
    }

    /// Remembers that `token` committed a change whose position could not be read (the connection
    /// lost right after the commit): its reads go to the primary until a check begun after now
    /// places it at the primary's flushed position then (`placeUnknownFences`), and from there
    /// until the replica has replayed that.
    package func wroteAtUnknownPosition(token: [UInt8]) {
        let committed = ContinuousClock.now
        state.withLock { state in
            if state.unknownFences.count >= 100_000 { state.unknownFences.removeAll() }
            state.unknownFences[token] = committed
        }
    }

    /// A check begun at `started` read the primary's flushed position `flushed`: every commit of
    /// unknown position made before `started` is at or before it.
    package func placeUnknownFences(checkStarted started: ContinuousClock.Instant, flushed: LSN) {
        state.withLock { state in
            for (token, committed) in state.unknownFences where committed < started {
                state.fences[token] = max(state.fences[token] ?? flushed, flushed)
                state.unknownFences[token] = nil
            }
        }
    }

    /// A read on the replica failed for want of it: use the primary until the next check succeeds.
    package func failed() {
        state.withLock { $0.up = false }
        ServiceMetrics.replicaUp.record(0)
    }

    /// Checks the replica: that it answers and is replaying, how far (`pg_last_wal_replay_lsn`),
    /// and how far behind the primary's flushed log: in bytes, and in seconds (how long ago the
    /// primary was where the replica is now, from the positions of earlier checks). Marks it down
    /// when it does not answer.
    package func check(primary: PostgresClient, within timeout: Duration) async {
        let started = ContinuousClock.now
        do {
            // From the refusal's transaction start, not its commit: a bulk request's deadline more, generously.
            let window = (maxLag * 2 + checkInterval * 2 + .seconds(600)).inSeconds
            let (flushedText, refused) = try await primary.withConnection(within: timeout, timers: EventLoopTimers()) {
                connection in
                let flushed = try await firstRow(
                    "SELECT pg_current_wal_flush_lsn()::text", on: connection, logger: logger
                ) {
                    try $0.decode(String.self)
                }
                var refused: Set<[UInt8]> = []
                let rows = try await connection.query(
                    "SELECT secret_hash FROM recently_refused_credentials(\(window) * interval '1 second')",
                    logger: logger)
                for try await hash in rows.decode(ByteBuffer.self) { refused.insert(Array(hash.readableBytesView)) }
                return (flushed, refused)
            }
            let flushed = flushedText.flatMap { LSN($0) }
            if let flushed { placeUnknownFences(checkStarted: started, flushed: flushed) }
            let replica = try await client.withConnection(within: timeout, timers: EventLoopTimers()) { connection in
                try await firstRow(
                    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text", on: connection, logger: logger
                ) {
                    try $0.decode((Bool, String?).self)
                }
            }
            guard let (recovering, replayText) = replica, recovering, let replayed = replayText.flatMap({ LSN($0) }),
                let flushed
            else {
                logger.warning("the read replica is not a replica in recovery: reads stay on the primary")
                mark(up: false, replayed: nil, lagBytes: 0, lagSeconds: 0)
                return
            }
            let now = ContinuousClock.now
            let lagSeconds = state.withLock { state in
                state.primaryHistory.append((now, flushed))
                state.primaryHistory.removeAll { now - $0.at > maxLag * 3 }
                guard flushed > replayed else { return 0.0 }
                // The newest check at which the primary had no more than the replica has now.
                let since =
                    state.primaryHistory.last { $0.lsn <= replayed }?.at ?? state.primaryHistory.first?.at ?? now
                return (now - since).inSeconds
            }
            mark(
                up: true, replayed: replayed, lagBytes: flushed > replayed ? flushed.value - replayed.value : 0,
                lagSeconds: lagSeconds,
                refused: refused)
        } catch {
            logger.debug("read replica check failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            mark(up: false, replayed: nil, lagBytes: 0, lagSeconds: 0)
        }
    }

    package func mark(up: Bool, replayed: LSN?, lagBytes: UInt64, lagSeconds: Double, refused: Set<[UInt8]> = []) {
        let now = ContinuousClock.now
        let wasUp = state.withLock { state in
            let wasUp = state.up
            (state.up, state.lagSeconds, state.refused) = (up, lagSeconds, refused)
            state.checkedAt = up ? now : nil
            if let replayed {
                state.replayed = replayed
                state.fences = state.fences.filter { $0.value > replayed }
            }
            return wasUp
        }
        if wasUp != up {
            logger.notice(up ? "read replica available" : "read replica unavailable: reads go to the primary")
        }
        ServiceMetrics.replicaUp.record(up ? 1 : 0)
        ServiceMetrics.replicaLagBytes.record(Double(lagBytes))
        ServiceMetrics.replicaLagSeconds.record(lagSeconds)
    }
}

/// Checks the read replica every `checkInterval` while the service runs (`ReadReplica.check`).
package struct ReplicaMonitor: Service {
    package let replica: ReadReplica
    package let primary: PostgresClient
    package let timeout: Duration

    package init(replica: ReadReplica, primary: PostgresClient, timeout: Duration) {
        (self.replica, self.primary, self.timeout) = (replica, primary, timeout)
    }

    package func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await replica.check(primary: primary, within: timeout)
            try? await gracefulShutdown(sleeping: replica.checkInterval)
        }
    }
}
