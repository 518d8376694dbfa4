import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A change with nothing but its audit event, to drive appends directly.
struct RecordOnly: AuditedOperation {
    static let action: Action = "accounts.sync"
    let target: String
    var reason = "append"
    var after = "{\"n\":1}"

    func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        Audited(
            1,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "test", targetID: target, reason: reason,
                before: nil, after: after))
    }
}

@Suite("Audit log in PostgreSQL: tampering, append-only, concurrency")
struct AuditTamperTests {
    /// A customer with a few changes, so its lane holds several events; returns the lane and the
    /// (id, seq) of the customer's events in it.
    func history(_ env: TestEnvironment) async throws -> (chain: String, events: [(id: Int64, seq: Int64)]) {
        let customer = try await env.customer()
        let manager = env.context(.backendManager)
        for round in 1...3 {
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "round \(round)"), context: manager)
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .unlock, reason: "round \(round)"), context: manager)
        }
        let chain = AuditChain.chain(tenantID: platformTenantID, targetID: customer.id.uuidString.lowercased())
        let events = try await env.owner.withConnection(logger: testLogger) { connection in
            var events: [(Int64, Int64)] = []
            for try await row in try await connection.query(
                """
                SELECT id, seq FROM audit_events WHERE target_id = \(customer.id.uuidString.lowercased()) ORDER \
                BY seq
                """,
                logger: testLogger
            ).decode((Int64, Int64).self) { events.append(row) }
            return events
        }
        return (chain, events.map { (id: $0.0, seq: $0.1) })
    }

    func verify(_ env: TestEnvironment, checkpoint: [ChainHead] = [], pageSize: Int = 20_000) async throws
        -> AuditLog.Report
    {
        try await AuditLog(database: env.database).verify(
            checkpoint: checkpoint, context: env.context(.auditor), pageSize: pageSize)
    }

    /// Statements that swap `column` between the rows where it is `a` and `b` (through -1), among
    /// the rows `scope` selects.
    func swap(_ column: String, _ a: Int64, _ b: Int64, where scope: String = "TRUE") -> [String] {
        [
            "UPDATE audit_events SET \(column) = -1 WHERE \(scope) AND \(column) = \(a)",
            "UPDATE audit_events SET \(column) = \(a) WHERE \(scope) AND \(column) = \(b)",
            "UPDATE audit_events SET \(column) = \(b) WHERE \(scope) AND \(column) = -1",
        ]
    }

    /// Runs statements as the superuser with the append-only triggers off, as an attacker with full access would.
    func tamper(_ env: TestEnvironment, _ statements: [String]) async throws {
        try await env.owner.withConnection(logger: testLogger) { connection in
            try await connection.query("SET session_replication_role = replica", logger: testLogger)
            for sql in statements { try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) }
        }
    }

    @Test("a clean database verifies")
    func clean() async throws {
        try await TestEnvironment.with { env in
            _ = try await history(env)
            let report = try await verify(env)
            #expect(report.failure == nil)
            #expect(report.events > 10)
        }
    }

    @Test(
        """
        verification reads the log page by page: chains split across pages verify whole, and an edit on a later \
        page is named
        """
    )
    func pages() async throws {
        try await TestEnvironment.with { env in
            let (_, events) = try await history(env)
            let whole = try await verify(env)
            for size in [1, 2, 5] {
                let paged = try await verify(env, pageSize: size)
                #expect(
                    paged.failure == nil && paged.events == whole.events && paged.chains == whole.chains,
                    "pages of \(size)")
            }
            try await tamper(env, ["UPDATE audit_events SET reason = 'nothing to see' WHERE id = \(events[4].id)"])
            #expect(try await verify(env, pageSize: 2).failure?.eventID == events[4].id)
        }
    }

    @Test(
        """
        events whose ids are out of seq order (ids are not hashed) still verify: the chain is read again in seq \
        order, which decides
        """
    )
    func idsOutOfOrder() async throws {
        try await TestEnvironment.with { env in
            let (_, events) = try await history(env)
            let (a, b) = (events[1].id, events[3].id)
            try await tamper(
                env, ["ALTER TABLE audit_events ALTER COLUMN id SET GENERATED BY DEFAULT"] + swap("id", a, b))
            #expect(
                try await env.ownerScalar("SELECT seq FROM audit_events WHERE id = \(a)", as: Int64.self)
                    == events[3].seq)
            let report = try await verify(env)
            #expect(report.failure == nil)
            // Editing an event on top is still named, by the reading in seq order.
            try await tamper(env, ["UPDATE audit_events SET reason = 'nothing to see' WHERE id = \(b)"])
            let edited = try await verify(env)
            #expect(edited.failure?.kind == .edited)
            #expect(edited.failure?.eventID == b)
        }
    }

    @Test("an edited event is named")
    func edited() async throws {
        try await TestEnvironment.with { env in
            let (_, events) = try await history(env)
            let victim = events[2].id
            try await tamper(env, ["UPDATE audit_events SET reason = 'nothing to see' WHERE id = \(victim)"])
            let failure = try await verify(env).failure
            #expect(failure?.kind == .edited)
            #expect(failure?.eventID == victim)
        }
    }

    @Test("an edit that also rewrites the stored bytes is named")
    func editedWithBytes() async throws {
        try await TestEnvironment.with { env in
            let (_, events) = try await history(env)
            let victim = events[2].id
            try await tamper(
                env,
                [
                    """
                    UPDATE audit_events SET reason = 'nothing to see',
                        canonical = audit_canonical(chain, seq, tenant_id, occurred_at, actor_id, actor_role, action,
                            target_type, target_id,
                                                    request_id, source_ip, 'nothing to see', before, after,
                                                        policy_digest, token_id)
                    WHERE id = \(victim)
                    """
                ])
            let failure = try await verify(env).failure
            #expect(failure?.kind == .edited)
            #expect(failure?.eventID == victim)
        }
    }

    @Test("a deleted event is detected at the event after it")
    func deleted() async throws {
        try await TestEnvironment.with { env in
            let (_, events) = try await history(env)
            try await tamper(env, ["DELETE FROM audit_events WHERE id = \(events[2].id)"])
            let failure = try await verify(env).failure
            #expect(failure?.kind == .deleted)
            #expect(failure?.eventID == events[3].id)
        }
    }

    @Test("an inserted, correctly linked event is named")
    func inserted() async throws {
        try await TestEnvironment.with { env in
            let (chain, events) = try await history(env)
            let at = events[2].seq
            try await tamper(
                env,
                [
                    "UPDATE audit_events SET seq = seq + 1000000 WHERE chain = '\(chain)' AND seq >= \(at)",
                    "UPDATE audit_events SET seq = seq - 999999 WHERE chain = '\(chain)' AND seq >= 1000000",
                    """
                    INSERT INTO audit_events (tenant_id, chain, seq, occurred_at, actor_id, actor_role, action,
                        target_type, target_id, request_id,
                        source_ip, reason, before, after, policy_digest, canonical, prev_hash, hash)
                    SELECT tenant_id, chain, \(at), occurred_at, actor_id, actor_role, 'accounts.unlock', target_type,
                        target_id, 'forged',
                        source_ip, 'forged', before, after, policy_digest,
                        audit_canonical(chain, \(at), tenant_id, occurred_at, actor_id, actor_role, 'accounts.unlock',
                            target_type, target_id, 'forged',
                                        source_ip, 'forged', before, after, policy_digest, NULL),
                        hash,
                        sha256(hash || audit_canonical(chain, \(at), tenant_id, occurred_at, actor_id, actor_role,
                            'accounts.unlock', target_type,
                                                       target_id, 'forged', source_ip, 'forged', before, after,
                                                           policy_digest, NULL))
                    FROM audit_events WHERE chain = '\(chain)' AND seq = \(at - 1)
                    """,
                ])
            let forged = try await env.ownerScalar(
                "SELECT id FROM audit_events WHERE request_id = 'forged'", as: Int64.self)
            let failure = try await verify(env).failure
            #expect(failure?.kind == .inserted)
            #expect(failure?.eventID == forged)
        }
    }

    @Test("reordered events are detected")
    func reordered() async throws {
        try await TestEnvironment.with { env in
            let (chain, events) = try await history(env)
            let (a, b) = (events[2].seq, events[3].seq)
            try await tamper(env, swap("seq", a, b, where: "chain = '\(chain)'"))
            let failure = try await verify(env).failure
            #expect(failure?.kind == .reordered)
            #expect(failure?.eventID == events[3].id)
        }
    }

    @Test("deleting the newest events is caught by the heads, and by a kept checkpoint when the heads are forged too")
    func truncated() async throws {
        try await TestEnvironment.with { env in
            let (chain, events) = try await history(env)
            let checkpoint = try await AuditLog(database: env.database).heads(context: env.context(.auditor))
            let newest = events.last!
            try await tamper(env, ["DELETE FROM audit_events WHERE id = \(newest.id)"])
            #expect(try await verify(env).failure?.kind == .truncated)
            try await tamper(
                env,
                [
                    """
                    UPDATE audit_chain_heads h SET seq = e.seq, hash = e.hash
                    FROM (SELECT seq, hash FROM audit_events WHERE chain = '\(chain)' ORDER BY seq DESC LIMIT 1) e
                        WHERE h.chain = '\(chain)'
                    """
                ])
            #expect(try await verify(env).failure == nil, "with forged heads, only a checkpoint kept outside can tell")
            let failure = try await verify(env, checkpoint: checkpoint).failure
            #expect(failure?.kind == .truncated)
            #expect(failure?.chain == chain)
        }
    }

    @Test("UPDATE, DELETE and TRUNCATE on the audit table are refused by the database")
    func appendOnly() async throws {
        try await TestEnvironment.with { env in
            _ = try await history(env)
            for sql in ["UPDATE audit_events SET reason = 'x'", "DELETE FROM audit_events", "TRUNCATE audit_events"] {
                await #expect(throws: (any Error).self, "owner: \(sql)") { try await env.asOwner(sql) }
                await #expect(throws: (any Error).self, "service role: \(sql)") {
                    try await env.database.transaction(for: .system) { connection in
                        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger)
                    }
                }
            }
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE reason = 'x'", as: Int.self) == 0)
            #expect(try await verify(env).failure == nil)
        }
    }

    @Test("concurrent appends to one chain never fork it")
    func concurrentWriters() async throws {
        try await TestEnvironment.with { env in
            var limits = PoolLimits()
            limits.maximumConnections = 16
            // What is tested is the chain, not the waits: opening 16 connections and queueing on one
            // chain head while the rest of the suite runs may take longer than the service's bounds.
            limits.connectTimeout = .seconds(20)
            limits.leaseTimeout = .seconds(60)
            var configuration = env.appURL.clientConfiguration(limits)
            configuration.options.minimumConnections = 0
            let writers = 16
            let appendsPerWriter = 15
            let target = "concurrency-\(UUID().uuidString)"
            let client = PostgresClient(configuration: configuration, backgroundLogger: testLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                let database = Database(client: client, logger: testLogger)
                try await withThrowingTaskGroup(of: Void.self) { writersGroup in
                    for _ in 0..<writers {
                        writersGroup.addTask {
                            for _ in 0..<appendsPerWriter {
                                _ = try await database.runAsSystem(
                                    RecordOnly(target: target), context: env.context(.appService))
                            }
                        }
                    }
                    try await writersGroup.waitForAll()
                }
                group.cancelAll()
            }
            let chain = AuditChain.chain(tenantID: platformTenantID, targetID: target)
            let count = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_id = '\(target)'", as: Int.self)
            #expect(count == writers * appendsPerWriter)
            let gaps = try await env.ownerScalar(
                """
                SELECT count(*) FROM (SELECT seq, lag(seq) OVER (ORDER BY seq) AS prev FROM audit_events WHERE \
                chain = '\(chain)') s WHERE prev IS NOT NULL AND seq <> prev + 1
                """,
                as: Int.self)
            #expect(gaps == 0)
            let forks = try await env.ownerScalar(
                "SELECT count(*) - count(DISTINCT prev_hash) FROM audit_events WHERE chain = '\(chain)'", as: Int.self)
            #expect(forks == 0, "no two events share a predecessor")
            #expect(try await verify(env).failure == nil)
        }
    }
}
