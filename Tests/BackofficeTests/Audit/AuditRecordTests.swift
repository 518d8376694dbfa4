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
