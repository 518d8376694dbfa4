import BackofficePlatform
import Foundation
import PostgresNIO
import Synchronization
import Testing

/// What runs on a connection after its commit (with a read replica, the commit's position read for
/// read-your-writes) bounds itself: the request's deadline no longer cuts it once the commit took
/// effect (`RequestDeadline.watching`).
@Suite("After the commit: the fence's statement is answered at once when its connection closes, never a hang")
struct CommitFenceTests {
    @Test(
        """
        a statement on a connection that closes under it (one PostgresNIO never answers, as after a primary \
        killed at the commit) is answered unavailable at once by its watch, not never
        """
    )
    func lostConnectionAnswers() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.principals[.platformAdmin]!
            let answer = Task {
                try await env.database.client.withConnection { connection in
                    // Manual timers that nobody advances: only the lost connection can answer.
                    try await RequestDeadline.watching(connection, within: .seconds(600), timers: ManualTimers()) {
                        connection in
                        try await connection.close()
                        // Not through `send`'s check of `isClosed`: the statement PostgresNIO never answers.
                        return try await Task.detached {
                            try await connection.query("SELECT pg_current_wal_lsn()", logger: testLogger)
                        }
                        .value
                        .collect().count
                    }
                }
            }
            // At most 20 s: without the watch the answer never comes (the test fails, not hangs).
            switch await result(of: answer, within: 20) {
            case nil: Issue.record("no answer in 20 s")
            case .success(let rows): Issue.record("answered as if the statement ran: \(rows) rows")
            case .failure(let error): #expect(error as? DomainError == .unavailable, "\(error)")
            }
            let served = try await env.database.transaction(for: admin) { _ in 1 }
            #expect(served == 1, "the pool serves on")
        }
    }

    @Test(
        """
        a watch's release is its own: a lease's hold of a connection stays when a later hold on it (the fence's) \
        is released, so the lease's work is still told when the connection closes
        """
    )
    func releaseIsOwn() async throws {
        try await TestEnvironment.with { env in
            try await env.database.client.withConnection { connection in
                let lease = LostRecord(), fence = LostRecord()
                let leaseHold = ConnectionWatch.shared.hold(connection, for: lease)
                let fenceHold = ConnectionWatch.shared.hold(connection, for: fence)
                ConnectionWatch.shared.release(connection, fenceHold)
                try await connection.close()
                try await Task.sleep(for: .milliseconds(200))  // the close's callback runs on the event loop
                #expect(lease.lost.withLock { $0 } == 1, "the lease's work is told")
                #expect(fence.lost.withLock { $0 } == 0, "the released one is not")
                ConnectionWatch.shared.release(connection, leaseHold)
            }
        }
    }
}

/// Request work that counts the lost connections it is told of.
private final class LostRecord: RequestWork {
    let lost = Mutex(0)
    var isRunning: Bool { true }
    func expire() {}
    func claimCommit() -> Bool { true }
    func commitEnded() {}
    func committed() {}
    func connectionLost() { lost.withLock { $0 += 1 } }
}
