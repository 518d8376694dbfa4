import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Audit snapshots: encoded whole or refused, never an empty object in their place")
struct AuditRecordTests {
    @Test("a snapshot that cannot be encoded is an error (the change rolls back), not {}")
    func unencodableSnapshot() throws {
        struct Reading: Encodable { let value: Double }
        #expect(try AuditRecord.json(Reading(value: 2.5)) == #"{"value":2.5}"#)
        #expect(throws: DomainError.self) { try AuditRecord.json(Reading(value: .nan)) }
    }

    @Test(
        "a stored snapshot read back that does not decode is an error (500), not an event without its before or after")
    func undecodableSnapshot() throws {
        let decoded = try payload(#"{"status":"locked"}"#, as: Components.Schemas.AuditEvent.BeforePayload.self)
        #expect(decoded != nil)
        #expect(try payload(nil, as: Components.Schemas.AuditEvent.BeforePayload.self) == nil, "no snapshot: nil")
        #expect(throws: DomainError.self) {
            try payload("[1, 2]", as: Components.Schemas.AuditEvent.BeforePayload.self)
        }
    }
}

@Suite("Audit appends: a transaction takes its chains' heads in one order, so appends never deadlock")
struct AuditAppendOrderTests {
    /// A change whose only effect is its events, on `targets` in the order given.
    struct Events: AuditedChange {
        let targets: [String]
        var permission: Action { "subscriptions.renew" }
        var records: [AuditRecord] {
            targets.map {
                AuditRecord(
                    action: permission, tenantID: platformTenantID, targetType: "test", targetID: $0, reason: nil,
                    before: nil, after: nil)
            }
        }
        func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
            Audited(records.count, event: records[0], more: Array(records.dropFirst()))
        }
    }

    @Test("the chain is the SQL function's (the platform's 16 lanes by the target's SHA-256); order kept per chain")
    func chains() async throws {
        try await TestEnvironment.with { env in
            let targets = (0..<40).map { "target-\($0)" }
            _ = try await env.database.runAsSystem(Events(targets: targets), context: env.context(.platformAdmin))
            let stored = try #require(
                try await env.ownerScalar(
                    """
                    SELECT string_agg(target_id || '=' || chain, ',' ORDER BY id) FROM audit_events
                    WHERE target_type = 'test'
                    """, as: String.self))
            let ordered = AuditRecord.appendOrder(Events(targets: targets).records).map { "\($0.targetID)=\($0.chain)" }
            #expect(stored == ordered.joined(separator: ","), "appended in appendOrder, each on the chain it names")
            #expect(Set(ordered.map { $0.split(separator: "=")[1] }).count > 8, "the targets spread over the lanes")
        }
    }

    @Test("20 pairs of transactions appending to the same lanes in opposite orders: none fails")
    func opposite() async throws {
        try await TestEnvironment.with { env in
            let targets = (0..<16).map { "lane-\($0)" }
            try await withThrowingTaskGroup(of: Int.self) { group in
                for pair in 0..<20 {
                    for order in [targets, targets.reversed()] {
                        group.addTask {
                            try await env.database.runAsSystem(
                                Events(targets: order.map { "\($0)-\(pair % 2)" }), context: env.context(.platformAdmin)
                            )
                        }
                    }
                }
                let appended = try await group.reduce(0, +)
                #expect(appended == 40 * 16)
            }
        }
    }
}
