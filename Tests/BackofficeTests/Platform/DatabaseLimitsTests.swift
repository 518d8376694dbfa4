import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Synchronization
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Waiting for the database is bounded: 503 with Retry-After, never a hang")
struct DatabaseLimitsTests {
    @Test(
        """
        a statement waiting on a lock past the statement timeout is 503 statement_timeout with Retry-After, \
        changes nothing, and the pool serves the next requests
        """
    )
    func statementTimeout() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let account = {
                try await env.ownerScalar(
                    "SELECT status || ' v' || version FROM customers WHERE id = '\(customer.id)'", as: String.self)
            }
            let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
            let (accountBefore, eventsBefore) = (try await account(), try await events())
            var limits = PoolLimits.forTests
            limits.statementTimeout = .milliseconds(500)
            // about the statement timeout: a loaded machine's slow first connect must not answer 503 first
            limits.leaseTimeout = .seconds(60)
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 2, limits: limits) {
                database in
                try await env.owner.withConnection(logger: testLogger) { holder in
                    // Another session holds the account's row lock for the whole request.
                    try await holder.query("BEGIN", logger: testLogger)
                    try await holder.query(
                        "SELECT set_config('app.tenant_id', '\(unescaped: platformTenantID.text)', true)",
                        logger: testLogger)
                    try await holder.query(
                        "SELECT 1 FROM customers WHERE id = \(customer.id) FOR UPDATE", logger: testLogger)
                    try await env.withApp(database: database) { client in
                        let start = ContinuousClock.now
                        let reply = try await client.call(
                            .post, "/v1/customers/\(customer.id.text)/lock", token: manager,
                            json: #"{"reason":"stuck"}"#)
                        #expect(reply.status == 503)
                        #expect(reply["code"] == "statement_timeout")
                        #expect(reply.headers[.retryAfter] == "2")
                        // Without the timeout it would wait for the lock, held until this block ends: forever.
                        #expect(
                            ContinuousClock.now - start < .seconds(10),
                            "answered after the 0.5 s statement timeout (slack for a loaded machine)")
                        for _ in 0..<4 {  // more requests than the pool has connections: none was left behind
                            #expect(try await client.call(.get, "/v1/customers?limit=1", token: manager).status == 200)
                        }
                    }
                    try await holder.query("ROLLBACK", logger: testLogger)
                }
            }
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self)
                    == "active")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'accounts.lock'", as: Int.self) == 0)
            #expect(try await account() == accountBefore, "the account's status and version are unchanged")
            #expect(try await events() == eventsBefore, "nothing audited")
        }
    }

    @Test(
        """
        when no pooled connection comes within the lease timeout, a request is 503 service_unavailable with \
        Retry-After at once, and the next one after a connection frees succeeds
        """
    )
    func leaseTimeout() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await Self.withPoolHeld(env) { client, timers in
                async let reply = client.call(.get, "/v1/customers?limit=1", token: manager)
                await timers.waitUntilScheduled(2)  // the request's deadline and its lease
                timers.advance(by: .seconds(1))  // the lease timeout, and not the deadline
                let refused = try await reply
                #expect(refused.status == 503)
                #expect(refused["code"] == "service_unavailable")
                #expect(refused.headers[.retryAfter] == "2")
            } after: { client in
                let reply = try await client.call(.get, "/v1/customers?limit=1", token: manager)
                #expect(reply.status == 200)
            }
        }
    }

    @Test(
        """
        a change whose lease times out is 503 service_unavailable at once and changes nothing, not even once the \
        connection frees
        """
    )
    func leaseTimeoutOfAChange() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let account = {
                try await env.ownerScalar(
                    "SELECT status || ' v' || version FROM customers WHERE id = '\(customer.id)'", as: String.self)
            }
            let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
            let (accountBefore, eventsBefore) = (try await account(), try await events())
            try await Self.withPoolHeld(env) { client, timers in
                async let reply = client.call(
                    .post, "/v1/customers/\(customer.id.text)/lock", token: manager, json: #"{"reason":"late"}"#)
                await timers.waitUntilScheduled(2)
                timers.advance(by: .seconds(1))
                let refused = try await reply
                #expect(refused.status == 503)
                #expect(refused["code"] == "service_unavailable")
            } after: { client in
                // The pool's one connection is free again and serves leases in order: had the
                // withdrawn lease stayed queued, its change would have run before this read.
                let read = try await client.call(.get, "/v1/customers?limit=1", token: manager)
                #expect(read.status == 200)
            }
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self)
                    == "active")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'accounts.lock'", as: Int.self) == 0)
            #expect(try await account() == accountBefore, "the account's status and version are unchanged")
            #expect(try await events() == eventsBefore, "nothing audited")
        }
    }

    @Test(
        """
        a request answered 503 by its deadline never commits afterwards: a write its work makes after the answer \
        is rolled back
        """
    )
    func answeredRequestNeverCommits() async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[.platformAdmin]!
            let timers = ManualTimers()
            let wrote = Latch()
            let (started, start) = AsyncStream<Void>.makeStream()
            let answered = Latch()
            async let answer: Void = RequestDeadline.run(within: .milliseconds(500), timers: timers) {
                try await env.database.requestTransaction(tokenHash: TokenSecret(value: token).hash) {
                    principal, transaction in
                    // A use case that outlives its deadline: it writes only once the request has its 503.
                    start.yield()
                    await answered.wait()
                    #expect(RequestDeadline.work?.isRunning == false)
                    // (written from a task the deadline's cancellation does not reach, as a statement already sent
                    // would be)
                    let connection = transaction.connection
                    _ = try await Task.detached {
                        try await connection.query(
                            "INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), 'late-shop', 'Late')",
                            logger: testLogger)
                    }.value
                    wrote.open()
                    return ((), commit: true)
                }
            }
            for await _ in started { break }
            timers.advance(by: .milliseconds(500))
            do {
                try await answer
                Issue.record("the work's answer came after its deadline")
            } catch { #expect(error as? DomainError == .unavailable) }
            answered.open()
            // The work ends on its own after the answer: the pool's next transaction waits for its connection.
            let served = try await env.database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 }
            #expect(served == 1, "the pool serves on")
            await wrote.wait()  // the late write was made
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM tenants WHERE slug = 'late-shop'", as: Int.self) == 0,
                "never committed")
        }
    }

    @Test(
        """
        a connection that closes under a request answers it 503 at once, never a hang: a statement PostgresNIO \
        drops (written to the closed connection), and one sent during the commit, which holds the deadline back
        """
    )
    func lostConnectionAnswers() async throws {
        try await TestEnvironment.with { env in
            let token = env.fixture.tokens[.platformAdmin]!
            for duringCommit in [false, true] {
                // Manual timers that nobody advances: only the lost connection can answer.
                let answer = Task {
                    try await RequestDeadline.run(within: .seconds(600), timers: ManualTimers()) {
                        try await env.database.requestTransaction(tokenHash: TokenSecret(value: token).hash) {
                            _, transaction in
                            let connection = transaction.connection
                            try await connection.close()
                            // Not through `send`'s check of `isClosed`: the statement PostgresNIO never answers.
                            let dropped = { @Sendable in
                                _ = try await Task.detached {
                                    try await connection.query("SELECT 1", logger: testLogger)
                                }
                                .value
                            }
                            if duringCommit {
                                try await RequestDeadline.committing(dropped)
                            } else {
                                try await dropped()
                            }
                            return ((), commit: false)
                        }
                    }
                }
                // At most 20 s: without the watch the answer never comes (the test fails, not hangs).
                let outcome = await result(of: answer, within: 20)
                switch outcome {
                case nil: Issue.record("no answer in 20 s (during the commit: \(duringCommit))")
                case .success: Issue.record("answered as if the statement ran")
                case .failure(let error): #expect(error as? DomainError == .unavailable, "\(error)")
                }
            }
            // Once a commit took effect, a lost connection no longer answers: the work does, with what it committed.
            let committed = try await RequestDeadline.run(within: .seconds(600), timers: ManualTimers()) {
                let result = try await RequestDeadline.committing { "committed" }
                RequestDeadline.work?.connectionLost()
                return result
            }
            #expect(committed == "committed")
            let served = try await env.database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 }
            #expect(served == 1, "the pool serves on")
        }
    }

    @Test(
        """
        inside a request's work, a connection that comes after the lease timed out runs nothing: the request was \
        answered 503 already
        """
    )
    func lateLeaseRunsNothing() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.partners[0].admin
            let timers = ManualTimers()
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1, limits: .forTests) {
                database in
                _ = try await database.transaction(for: admin) { _ in 1 }  // the one connection is open
                // A request's work that records its expiry but, unlike the real one, is not
                // cancelled by it: the lease stays queued and its connection comes once freed.
                let work = RecordingWork()
                let lease = try await Self.holdingTheConnection(of: database, as: admin) {
                    let lease = Task { [database, work, timers] in
                        try await RequestDeadline.$work.withValue(work) {
                            try await database.client.withConnection(within: .milliseconds(300), timers: timers) { _ in
                                work.ran.withLock { $0 = true }
                            }
                        }
                    }
                    await timers.waitUntilScheduled()
                    timers.advance(by: .milliseconds(300))
                    #expect(work.expiries.withLock { $0 } == 1)
                    return lease
                }
                // The connection is free now, and comes to the queued lease.
                await #expect(throws: DomainError.unavailable) { try await lease.value }
                #expect(!work.ran.withLock { $0 }, "the body ran for a request already answered 503")
            }
        }
    }

    @Test(
        """
        inside a request, a lag-tolerant read whose replica connection does not come in time is answered by the \
        primary (not 503), and the replica is marked down
        """
    )
    func lateReplicaLeaseFallsBackToThePrimary() async throws {
        try await TestEnvironment.with { env in
            let hash = TokenSecret(value: env.fixture.tokens[.backendManager]!).hash
            var limits = PoolLimits.forTests
            limits.maximumConnections = 1
            let timers = ManualTimers()
            limits.timers = timers
            let replicaLimits = limits
            // A "replica" of one connection to the same database, marked up: only its lease matters here.
            let replicaClient = PostgresClient(
                configuration: env.appURL.clientConfiguration(limits), backgroundLogger: testLogger)
            let replica = ReadReplica(client: replicaClient, leaseTimeout: .milliseconds(300), logger: testLogger)
            replica.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await replicaClient.run() }
                defer { group.cancelAll() }
                try await replicaClient.withConnection { _ in }  // its one connection is open
                try await Database.with(url: env.appURL, logger: testLogger, limits: .forTests) { primary in
                    let database = Database(
                        client: primary.client, logger: testLogger, limits: replicaLimits, replica: replica)
                    let (held, signal) = AsyncStream<Void>.makeStream()
                    let release = Latch()
                    async let holding: Void = replicaClient.withConnection { _ in
                        signal.yield()
                        await release.wait()
                    }
                    for await _ in held { break }
                    async let read = RequestDeadline.run(within: .seconds(20), timers: timers) {
                        try await database.readSession(tokenHash: hash, lagTolerant: true) { principal, _ in
                            principal?.role
                        }
                    }
                    await timers.waitUntilScheduled(2)  // the deadline and the replica's lease
                    timers.advance(by: .milliseconds(300))
                    let role = try await read
                    #expect(role == "backend_manager", "answered by the primary")
                    #expect(replica.route(token: hash, readAfter: nil) == .primary(because: "down"))
                    release.open()
                    try await holding
                }
            }
        }
    }

    /// Runs `body` while a transaction holds a connection of `database`; the connection is
    /// released when `body` has returned, and this returns once the holding transaction ended.
    private static func holdingTheConnection<T: Sendable>(
        of database: Database, as principal: Principal, _ body: () async throws -> T
    ) async throws -> T {
        let (held, signal) = AsyncStream<Void>.makeStream()
        let release = Latch()
        async let holding: Void = database.transaction(for: principal) { _ in
            signal.yield()
            await release.wait()
        }
        for await _ in held { break }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        release.open()
        try await holding
        return try result.get()
    }

    /// A request's work as the lease sees it, counting its expiries.
    private final class RecordingWork: RequestWork {
        let expiries = Mutex(0)
        /// Whether the lease's body ran.
        let ran = Mutex(false)
        var isRunning: Bool { expiries.withLock { $0 == 0 } }
        func expire() { expiries.withLock { $0 += 1 } }
        func claimCommit() -> Bool { isRunning }
        func commitEnded() {}
        func committed() {}
        func connectionLost() { expire() }
    }

    /// Serves the API from a pool of one connection with a 1 s lease timeout kept by manual
    /// timers: `during` runs while another transaction holds that connection, `after` once it is
    /// free again.
    private static func withPoolHeld(
        _ env: TestEnvironment, during: @escaping @Sendable (any TestClientProtocol, ManualTimers) async throws -> Void,
        after: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let timers = ManualTimers()
        var limits = PoolLimits.forTests
        limits.leaseTimeout = .seconds(1)
        limits.timers = timers
        let manager = env.fixture.tokens[.backendManager]!
        let admin = env.fixture.partners[0].admin
        try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1, limits: limits) {
            database in
            try await env.withApp(database: database) { client in
                // the one connection opened
                #expect(try await client.call(.get, "/v1/customers?limit=1", token: manager).status == 200)
                try await holdingTheConnection(of: database, as: admin) { try await during(client, timers) }
                try await after(client)
            }
        }
    }

    @Test(
        """
        outside a request (a background service, the CLI) a lease that times out throws unavailable and leaves \
        the caller's task running
        """
    )
    func leaseTimeoutOutsideARequest() async throws {
        try await TestEnvironment.with { env in
            let timers = ManualTimers()
            var limits = PoolLimits.forTests
            limits.leaseTimeout = .seconds(1)
            limits.timers = timers
            let admin = env.fixture.partners[0].admin
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1, limits: limits) {
                database in
                #expect(try await database.transaction(for: admin) { _ in 1 } == 1)  // the one connection opened
                try await Self.holdingTheConnection(of: database, as: admin) {
                    async let refused: Void = database.transaction(for: admin) { _ in
                        Issue.record("ran without a connection")
                    }
                    await timers.waitUntilScheduled()
                    timers.advance(by: .seconds(1))
                    do {
                        try await refused
                        Issue.record("a transaction ran without a lease")
                    } catch { #expect(error as? DomainError == .unavailable) }
                    // A lease that ended its wait by cancelling the caller's task (as inside a request's
                    // work) would end a background service here.
                    #expect(!Task.isCancelled, "the caller goes on")
                }
                #expect(try await database.transaction(for: admin) { _ in 7 } == 7)
            }
        }
    }
}
