import Crypto
import Foundation
import PostgresNIO

/// What one change records in the audit log. The actor, request id, source ip and policy digest
/// come from the operation's context when it is appended.
package struct AuditRecord: Sendable {
    package let action: String
    package let tenantID: UUID
    package let targetType: String
    package let targetID: String
    package let reason: String?
    /// JSON text of the target before and after the change (nil when it did not exist).
    package let before: String?
    package let after: String?
    /// Who the event names as actor when not the operation's principal (the system, for
    /// automatic lockout and expiry).
    package var actor: Principal?

    package init(
        action: Action, tenantID: UUID, targetType: String, targetID: String, reason: String?, before: String?,
        after: String?
    ) {
        self.action = action.rawValue
        (self.tenantID, self.targetType, self.targetID, self.reason, self.before, self.after) = (
            tenantID, targetType, targetID, reason, before, after
        )
        self.actor = nil
    }

    /// The same record with the system as its actor.
    package var bySystem: AuditRecord {
        var copy = self
        copy.actor = .system
        return copy
    }

    /// JSON text of a snapshot, keys sorted, for `before`/`after`.
    /// - Throws: `inconsistent` when the value cannot be encoded (never an empty `{}` in its place:
    ///   the audit event would say nothing of what changed).
    package static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch {
            throw DomainError.inconsistent("a snapshot of \(type(of: value)) cannot be encoded as JSON: \(error)")
        }
    }

    /// The chain `audit_append` appends it to: its tenant's, or for the platform one of 16 lanes
    /// chosen by the first byte of the target id's SHA-256 (the same rule as the SQL function).
    package var chain: String {
        guard tenantID == platformTenantID else { return "tenant:" + tenantID.text }
        let lane = Int(SHA256.hash(data: Data(targetID.utf8)).first { _ in true } ?? 0) % 16
        return "platform:" + (lane < 10 ? "0" : "") + String(lane)
    }

    /// `events` in the order a transaction appends them: chain by chain in one order for every
    /// transaction (each chain's events in their own order), so two transactions that append to
    /// the same chains take the chains' head locks in the same order and never deadlock.
    package static func appendOrder(_ events: [AuditRecord]) -> [AuditRecord] {
        guard events.count > 1 else { return events }
        return events.enumerated().map { (chain: $0.element.chain, index: $0.offset, event: $0.element) }
            .sorted { ($0.chain, $0.index) < ($1.chain, $1.index) }.map(\.event)
    }

    /// Appends the record on `connection`, inside the caller's transaction (the use-case runner's,
    /// so a change and its event commit or roll back together).
    package func append(context: OperationContext, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.rows(AppendAuditEvent(record: self, context: context), logger: logger)
        ServiceMetrics.auditAppends.increment()
    }
}

/// A change's result with the audit events that record it. An operation returns this, and the
/// executor appends the events in the change's own transaction: a change cannot be written
/// without its event. `events` is empty only when nothing changed.
package struct Audited<Output: Sendable>: Sendable {
    package let output: Output
    package let events: [AuditRecord]

    package init(_ output: Output, event: AuditRecord, more: [AuditRecord] = []) {
        self.output = output
        self.events = [event] + more
    }

    private init(unchanged output: Output) {
        self.output = output
        self.events = []
    }

    /// Nothing changed: nothing to audit.
    package static func unchanged(_ output: Output) -> Audited<Output> { Audited(unchanged: output) }
}

/// Appends one event (`audit_append` in SQL, the only way the service can write the log: it picks
/// the chain, locks its head, links and inserts, and refuses a tenant the transaction does not act for).
package struct AppendAuditEvent: PostgresPreparedStatement {
    package static let sql =
        "SELECT audit_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::jsonb, $11::text::jsonb, $12, $13, $14)"
    package typealias Row = Int64
    package let record: AuditRecord
    package let context: OperationContext

    package func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 14)
        b.append(record.tenantID)
        let actor = record.actor ?? context.principal
        b.append(actor.operatorID)
        b.append(actor.role)
        b.append(record.action)
        b.append(record.targetType)
        b.append(record.targetID)
        b.append(context.requestID)
        b.append(context.sourceIP)
        b.append(record.reason)
        b.append(record.before)
        b.append(record.after)
        b.append(context.policies.digest)
        // The credential the request came with, also when the event names the system as actor.
        b.append(context.principal.tokenID)
        // The console session the change was made in (none through the API); at sign-in, the one it starts.
        b.append(context.principal.sessionID ?? record.actor?.sessionID)
        return b
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
}
