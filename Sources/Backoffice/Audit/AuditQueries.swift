import Foundation
import NIOCore
import BackofficePlatform

/// One page of audit events, oldest first, after the keyset `afterID` (`audit.read`).
package struct ListAuditEvents: Query {
    package static let action: Action = "audit.read"
    package let filter: AuditFilter
    package let afterID: Int64
    package let limit: Int

    package func read(in unit: UnitOfWork) async throws -> [AuditEventRecord] {
        try await AuditLog.page(filter, afterID: afterID, limit: limit, on: unit.connection, logger: unit.logger)
    }
}

/// The head (seq, hash) of every visible chain (`audit.read`).
package struct ReadAuditHeads: Query {
    package static let action: Action = "audit.read"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> [ChainHead] {
        try await AuditLog.heads(on: unit.connection, logger: unit.logger)
    }
}

/// Every matching event as JSON lines (`audit.export`). The lines are read page by page, each
/// page in a transaction of its own, while the client consumes them.
package struct ExportAuditEvents: Query {
    package static let action: Action = "audit.export"
    let log: AuditLog
    let filter: AuditFilter

    package func read(in unit: UnitOfWork) async throws -> ExportPages<Int64> {
        log.export(filter, context: unit.context)
    }
}

/// Verifies every visible chain and compares it with a checkpoint (`audit.verify`), from one
/// consistent snapshot of its own (a REPEATABLE READ, READ ONLY transaction).
package struct VerifyAuditLog: Query {
    package static let action: Action = "audit.verify"
    let log: AuditLog
    let checkpoint: [ChainHead]

    package func read(in unit: UnitOfWork) async throws -> AuditLog.Report {
        try await log.verify(checkpoint: checkpoint, context: unit.context)
    }
}

/// Who last changed a target of the principal's tenant, and when, from its latest audit event:
/// what a stale edit's message names. Read by the operator whose edit was refused, whatever its
/// role may read of the log (it learns only who and when, of a record it was editing).
package struct LastChange: Query {
    package static let action: Action = "audit.read"
    let targetType: String
    let targetID: String

    package init(targetType: String, targetID: String) { (self.targetType, self.targetID) = (targetType, targetID) }

    package func read(in unit: UnitOfWork) async throws -> (who: String, at: Date)? {
        try await unit.first(
            """
            SELECT coalesce(o.email, e.actor_role), e.occurred_at FROM audit_events e
            LEFT JOIN operators o ON o.tenant_id = e.tenant_id AND o.id = e.actor_id
            WHERE e.target_id = \(targetID) AND e.target_type = \(targetType) AND e.tenant_id =
                \(unit.principal.tenantID)
            ORDER BY e.id DESC LIMIT 1
            """
        ) { try $0.decode((String, Date).self) }
    }
}
