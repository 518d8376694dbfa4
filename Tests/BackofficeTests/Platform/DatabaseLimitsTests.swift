import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Synchronization
import Testing

@testable import Backoffice

@Suite("Waiting for the database is bounded: 503 with Retry-After, never a hang")
struct DatabaseLimitsTests {
    @Test(
        "a statement waiting on a lock past the statement timeout is 503 statement_timeout with Retry-After, changes nothing, and the pool serves the next requests"
    )
    func statementTimeout() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            var limits = PoolLimits.forTests
            limits.statementTimeout = .milliseconds(500)
            limits.leaseTimeout = .seconds(60)  // about the statement timeout: a loaded machine's slow first connect must not answer 503 first
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 2, limits: limits) { database in
                try await env.owner.withConnection(logger: testLogger) { holder in
                    // Another session holds the account's row lock for the whole request.
                    try await holder.query("BEGIN", logger: testLogger)
                    try await holder.query("SELECT set_config('app.tenant_id', '\(unescaped: platformTenantID.text)', true)", logger: testLogger)
                    try await holder.query("SELECT 1 FROM customers WHERE id = \(customer.id) FOR UPDATE", logger: testLogger)
                    try await env.withApp(database: database) { client in
                        let start = ContinuousClock.now
                        let reply = try await client.call(
                            .post, "/v1/customers/\(customer.id.text)/lock", token: manager, json: #"{"reason":"stuck"}"#)
                        #expect(reply.status == 503)
                        #expect(reply["code"] == "statement_timeout")
                        #expect(reply.headers[.retryAfter] == "2")
                        // Without the timeout it would wait for the lock, held until this block ends: forever.
                        #expect(ContinuousClock.now - start < .seconds(10), "answered after the 0.5 s statement timeout (slack for a loaded machine)")
                        for _ in 0..<4 {  // more requests than the pool has connections: none was left behind
                            #expect(try await client.call(.get, "/v1/customers?limit=1", token: manager).status == 200)
                        }
                    }
                    try await holder.query("ROLLBACK", logger: testLogger)
                }
            }
            #expect(try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self) == "active")
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE action = 'accounts.lock'", as: Int.self) == 0)
        }
    }

    @Test(
        "when no pooled connection comes within the lease timeout, a request is 503 service_unavailable with Retry-After at once, and the next one after a connection frees succeeds"
    )
    func leaseTimeout() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await Self.withPoolHeld(env, for: .seconds(20)) { client in
                let start = ContinuousClock.now
                let reply = try await client.call(.get, "/v1/customers?limit=1", token: manager)
                #expect(reply.status == 503)
                #expect(reply["code"] == "service_unavailable")
                #expect(reply.headers[.retryAfter] == "2")
                // Well under the 20 s hold, with room for a machine busy with the whole suite (5 s seen once).
                let waited = ContinuousClock.now - start
                #expect(waited < .seconds(10), "refused after the 1 s lease timeout, not when the connection frees (20 s): \(waited)")
            } after: { client in
                let reply = try await client.call(.get, "/v1/customers?limit=1", token: manager)
                #expect(reply.status == 200)
            }
        }
    }

    @Test(
        "a change whose lease times out is 503 service_unavailable at once and changes nothing, not even once the connection frees"
    )
    func leaseTimeoutOfAChange() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            try await Self.withPoolHeld(env, for: .seconds(10)) { client in
                let reply = try await client.call(.post, "/v1/customers/\(customer.id.text)/lock", token: manager, json: #"{"reason":"late"}"#)
                #expect(reply.status == 503)
                #expect(reply["code"] == "service_unavailable")
            } after: { client in
                // The pool's connection is free again: a withdrawn lease must not run the change now.
                #expect(try await client.call(.get, "/v1/customers?limit=1", token: manager).status == 200)
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self) == "active")
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE action = 'accounts.lock'", as: Int.self) == 0)
        }
    }

    @Test("a request answered 503 by its deadline never commits afterwards: a write its work makes after the answer is rolled back")
    func answeredRequestNeverCommits() async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[.platformAdmin]!
            let wrote = Mutex(false)
            let ended = Mutex(false)
            // A connection open in the pool first: the lease inside the request's work is immediate, even on a busy machine.
            _ = try await env.database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 }
            await #expect(throws: DomainError.unavailable) {
                try await RequestDeadline.run(within: .milliseconds(500)) {
                    defer { ended.withLock { $0 = true } }
                    try await env.database.requestTransaction(tokenHash: TokenSecret(value: token).hash) { principal, transaction in
                        // A use case that outlives its deadline: it writes only once the request has its 503.
                        while RequestDeadline.work?.isRunning == true { try? await Task.sleep(for: .milliseconds(5)) }
                        // (written from a task the deadline's cancellation does not reach, as a statement already sent would be)
                        let connection = transaction.connection
                        try await Task.detached {
                            try await connection.query(
                                "INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), 'late-shop', 'Late')", logger: testLogger)
                        }.value
                        wrote.withLock { $0 = true }
                        return ((), commit: true)
                    }
                }
            }
            // The work is left to end on its own after the answer: wait for it (no clock involved).
            while !ended.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(wrote.withLock { $0 }, "the late write was made")
            #expect(try await env.ownerScalar("SELECT count(*) FROM tenants WHERE slug = 'late-shop'", as: Int.self) == 0, "and never committed")
            #expect(try await env.database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 } == 1, "the pool serves on")
        }
    }

    @Test("inside a request's work, a connection that comes after the lease timed out runs nothing: the request was answered 503 already")
    func lateLeaseRunsNothing() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.partners[0].admin
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1, limits: .forTests) { database in
                _ = try await database.transaction(for: admin) { _ in 1 }  // the one connection is open
                try await Self.holdingTheConnection(of: database, as: admin, for: .seconds(6)) {
                    // A request's work that records its expiry but, unlike the real one, is not
                    // cancelled by it: the lease stays queued and its connection comes once freed.
                    let work = RecordingWork()
                    let ran = Mutex(false)
                    let start = ContinuousClock.now
                    await #expect(throws: DomainError.unavailable) {
                        try await RequestDeadline.$work.withValue(work) {
                            try await database.client.withConnection(within: .milliseconds(300)) { _ in ran.withLock { $0 = true } }
                        }
                    }
                    #expect(ContinuousClock.now - start >= .seconds(1), "the lease came when the connection freed, after its timeout")
                    #expect(work.expiries.withLock { $0 } == 1)
                    #expect(!ran.withLock { $0 }, "the body ran for a request already answered 503")
                }
            }
        }
    }

    @Test(
        "inside a request, a lag-tolerant read whose replica connection does not come in time is answered by the primary (not 503), and the replica is marked down"
    )
    func lateReplicaLeaseFallsBackToThePrimary() async throws {
        try await TestEnvironment.with { env in
            let hash = TokenSecret(value: env.fixture.tokens[.backendManager]!).hash
            var limits = PoolLimits.forTests
            limits.maximumConnections = 1
            // A "replica" of one connection to the same database, marked up: only its lease matters here.
            let replicaClient = PostgresClient(configuration: env.appURL.clientConfiguration(limits), backgroundLogger: testLogger)
            let replica = ReadReplica(client: replicaClient, leaseTimeout: .milliseconds(300), logger: testLogger)
            replica.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await replicaClient.run() }
                defer { group.cancelAll() }
                try await replicaClient.withConnection { _ in }  // its one connection is open
                try await Database.with(url: env.appURL, logger: testLogger, limits: .forTests) { primary in
                    let database = Database(client: primary.client, logger: testLogger, limits: .forTests, replica: replica)
                    let (held, signal) = AsyncStream<Void>.makeStream()
                    async let holding: Void = replicaClient.withConnection { _ in
                        signal.yield()
                        try await Task.sleep(for: .seconds(10))  // far past the 300 ms lease timeout, however late its timer fires
                    }
                    for await _ in held { break }
                    let role = try await RequestDeadline.run(within: .seconds(20)) {
                        try await database.readSession(tokenHash: hash, lagTolerant: true) { principal, _ in principal?.role }
                    }
                    #expect(role == "backend_manager", "answered by the primary")
                    #expect(replica.route(token: hash, readAfter: nil) == .primary(because: "down"))
                    try await holding
                }
            }
        }
    }

    /// Runs `body` while a transaction holds a connection of `database` for `hold`; returns once
    /// both have ended.
    private static func holdingTheConnection(
        of database: Database, as principal: Principal, for hold: Duration, _ body: () async throws -> Void
    ) async throws {
        let (held, signal) = AsyncStream<Void>.makeStream()
        async let holding: Void = database.transaction(for: principal) { _ in
            signal.yield()
            try await Task.sleep(for: hold)
        }
        for await _ in held { break }
        try await body()
        try await holding
    }

    /// A request's work as the lease sees it, counting its expiries.
    private final class RecordingWork: RequestWork {
        let expiries = Mutex(0)
        var isRunning: Bool { expiries.withLock { $0 == 0 } }
        func expire() { expiries.withLock { $0 += 1 } }
        func claimCommit() -> Bool { isRunning }
        func commitEnded() {}
    }

    /// Serves the API from a pool of one connection with a 1 s lease timeout: `during` runs while
    /// another transaction holds that connection for `hold`, `after` once it is free again.
    private static func withPoolHeld(
        _ env: TestEnvironment, for hold: Duration, during: @escaping @Sendable (any TestClientProtocol) async throws -> Void,
        after: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var limits = PoolLimits.forTests
        limits.leaseTimeout = .seconds(1)
        let manager = env.fixture.tokens[.backendManager]!
        let admin = env.fixture.partners[0].admin
        try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1, limits: limits) { database in
            try await env.withApp(database: database) { client in
                // The pool's one connection opened first (opening it may take longer than the lease
                // timeout on a machine busy with a clean build).
                var warmedUp = false
                for _ in 0..<10 where !warmedUp {
                    warmedUp = try await client.call(.get, "/v1/customers?limit=1", token: manager).status == 200
                }
                #expect(warmedUp)
                try await holdingTheConnection(of: database, as: admin, for: hold) { try await during(client) }
                try await after(client)
            }
        }
    }

    @Test("outside a request (a background service, the CLI) a lease that times out throws unavailable and leaves the caller's task running")
    func leaseTimeoutOutsideARequest() async throws {
        try await TestEnvironment.with { env in
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(1)
            let admin = env.fixture.partners[0].admin
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1, limits: limits) { database in
                // The one connection opened first (opening it may take longer than the 1 s lease
                // timeout while the rest of the suite runs).
                var opened = false
                for _ in 0..<10 where !opened { opened = (try? await database.transaction(for: admin) { _ in 1 }) == 1 }
                #expect(opened)
                // Held far longer than the lease timeout: a suite run on two busy cores has fired a
                // 1 s timer 3 s late, and the refusal must still come while the connection is held.
                try await Self.holdingTheConnection(of: database, as: admin, for: .seconds(10)) {
                    let start = ContinuousClock.now
                    await #expect(throws: DomainError.unavailable) {
                        try await database.transaction(for: admin) { _ in Issue.record("ran without a connection") }
                    }
                    #expect(ContinuousClock.now - start < .seconds(8), "refused after the 1 s lease timeout, not when the connection frees")
                    // A lease that ended its wait by cancelling the caller's task (as inside a request's
                    // work) would end a background service here.
                    #expect(!Task.isCancelled, "the caller goes on")
                }
                #expect(try await database.transaction(for: admin) { _ in 7 } == 7)
            }
        }
    }
}
