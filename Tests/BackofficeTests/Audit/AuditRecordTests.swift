import Foundation
import Testing

@testable import Backoffice

@Suite("Audit snapshots: encoded whole or refused, never an empty object in their place")
struct AuditRecordTests {
    @Test("a snapshot that cannot be encoded is an error (the change rolls back), not {}")
    func unencodableSnapshot() throws {
        struct Reading: Encodable { let value: Double }
        #expect(try AuditRecord.json(Reading(value: 2.5)) == #"{"value":2.5}"#)
        #expect(throws: DomainError.self) { try AuditRecord.json(Reading(value: .nan)) }
    }
}
