import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// A subscription's changes take its row lock before its invoices': a renewal's verdict and a
/// cancellation voiding the same invoice wait for each other, and never deadlock.
@Suite("Renewal verdicts lock a subscription before its invoice, as a cancellation does")
struct RenewalLockOrderTests {
    @Test(
        """
        a verdict arriving while a cancellation holds the subscription waits without holding the invoice: \
        the cancellation takes the invoice at once; the verdict is recorded after it
        """)
    func verdictWaitsForTheSubscriptionFirst() async throws {
        try await TestEnvironment.with { env in
            let id = try #require(try await RenewalTests.activeSubscriptions(env).first)
            env.clock.advance(by: 31 * RenewalTests.day)
            let (charging, answer) = (Latch(), Latch())
            let gateway = CountingGateway(beforeCharge: {
                charging.open()
                await answer.wait()
            })
            let renewal = Task {
                defer { charging.open() }  // a run that charges nothing fails the test, never hangs it
                return try await RenewalTests.renew(env, gateway)
            }
            await charging.wait()
            let (waiting, taken) = try await env.ownerPool.withConnection { connection in
                defer { answer.open() }
                func run(_ sql: String) async throws {
                    for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) {}
                }
                // A cancellation's first lock, held while the provider's answer arrives.
                try await run("BEGIN")
                try await run("SELECT 1 FROM subscriptions WHERE id = '\(id.text)' FOR UPDATE")
                answer.open()
                let seen = try await Self.verdictWaits(env)
                // Its second lock: the open invoice, which the verdict must not be holding.
                var outcome = "taken"
                do {
                    try await run("SELECT 1 FROM invoices WHERE subscription_id = '\(id.text)' FOR UPDATE NOWAIT")
                } catch let error as PSQLError {
                    outcome = error.serverInfo?[.sqlState] ?? "\(error)"
                }
                try await run("ROLLBACK")
                return (seen, outcome)
            }
            #expect(waiting, "the verdict's transaction was never seen waiting for the subscription")
            #expect(taken == "taken", "the verdict held the invoice (55P03: lock not available): \(taken)")
            let report = try await renewal.value
            #expect(report.paid == 1, "\(report)")
            #expect(try await RenewalTests.state(env, id) == "active paid:1")
        }
    }

    /// Whether a statement of this database waits for a subscription's row lock within 20 s.
    static func verdictWaits(_ env: TestEnvironment) async throws -> Bool {
        for _ in 0..<1_000 {
            let waiting = try await env.ownerScalar(
                """
                SELECT count(*)::int FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM subscriptions%'
                """, as: Int32.self)
            if waiting ?? 0 > 0 { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
