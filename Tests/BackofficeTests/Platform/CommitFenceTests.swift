import BackofficePlatform
import Foundation
import PostgresNIO
import Testing

/// What runs on a connection after its commit (with a read replica, the commit's position read for
/// read-your-writes: `Database.leasedTransaction`'s `afterCommit`) is bounded like the commit.
@Suite("After the commit: a connection lost under the fence answers 503 at once, never a hang")
struct CommitFenceTests {
    @Test(
        """
        a connection that closes right after the commit, under the statement that reads the commit's position \
        (one PostgresNIO never answers), answers the request 503 at once, not never
        """
    )
    func lostAfterTheCommitAnswers() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.principals[.platformAdmin]!
            // Manual timers that nobody advances: only the lost connection can answer.
            let answer = Task {
                try await RequestDeadline.run(within: .seconds(600), timers: ManualTimers()) {
                    try await env.database.leasedTransaction(
                        { connection in
                            _ = try await connection.query("SELECT 1", logger: testLogger)
                            return ("committed", commit: true)
                        },
                        afterCommit: { connection in
                            try await connection.close()
                            // Not through `send`'s check of `isClosed`: the statement PostgresNIO never answers.
                            _ = try await Task.detached {
                                try await connection.query("SELECT pg_current_wal_lsn()", logger: testLogger)
                            }
                            .value
                        })
                }
            }
            // At most 20 s: without the claim around the fence the answer never comes (the test fails, not hangs).
            switch await result(of: answer, within: 20) {
            case nil: Issue.record("no answer in 20 s")
            case .success(let output): Issue.record("answered as if the fence had its position: \(output)")
            case .failure(let error): #expect(error as? DomainError == .unavailable, "\(error)")
            }
            let served = try await env.database.transaction(for: admin) { _ in 1 }
            #expect(served == 1, "the pool serves on")
        }
    }
}
