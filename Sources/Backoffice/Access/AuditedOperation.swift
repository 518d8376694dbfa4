import Foundation
import PostgresNIO

/// One use case that changes data (`LockAccount`, `CreateTenant`, …).
///
/// `perform` makes the change on a connection inside a transaction that already acts for the
/// principal's tenant, and returns the result with the audit events describing it; the runner
/// appends those events in the same transaction and commits both together, or neither.
public protocol AuditedOperation: Sendable {
    associatedtype Output: Sendable
    /// The permission checked before anything is read.
    static var action: Action { get }
    func perform(on connection: PostgresConnection, context: OperationContext, database: Database) async throws -> Audited<Output>
}

extension Database {
    /// Checks the policy, runs `operation` in one transaction and appends its audit events there.
    public func run<Operation: AuditedOperation>(_ operation: Operation, context: OperationContext) async throws -> Operation.Output {
        try await run(operation, context: context) { _, output in output }
    }

    /// Like `run(_:context:)`, with `finish` called in the same transaction after the audit
    /// append (where the idempotency record is written).
    public func run<Operation: AuditedOperation, Result: Sendable>(
        _ operation: Operation, context: OperationContext,
        finish: (PostgresConnection, Operation.Output) async throws -> Result
    ) async throws -> Result {
        try context.authorize(Operation.action)
        return try await performAudited(operation, context: context, finish: finish)
    }

    /// Runs an operation the system performs on its own (bootstrap, demo data, timed lock
    /// expiry): no policy check, events still appended in the same transaction.
    public func runAsSystem<Operation: AuditedOperation>(_ operation: Operation, context: OperationContext) async throws -> Operation.Output {
        try await performAudited(operation, context: context) { _, output in output }
    }

    private func performAudited<Operation: AuditedOperation, Result: Sendable>(
        _ operation: Operation, context: OperationContext,
        finish: (PostgresConnection, Operation.Output) async throws -> Result
    ) async throws -> Result {
        try await transaction(for: context) { connection in
            let audited = try await operation.perform(on: connection, context: context, database: self)
            for event in audited.events {
                try await AuditLog.append(event, context: context, on: connection, logger: logger)
            }
            return try await finish(connection, audited.output)
        }
    }
}
