import Foundation
import BackofficePlatform

/// The audit events appended on each day of a range, by action family (`orders` of
/// `orders.refund`), from the daily counts the append keeps (`audit_daily_actions`), in one
/// statement: every chain the principal's tenant may see.
package struct DailyAuditActions: Query {
    package static let action: Action = "audit.read"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    /// Events by day and family (only those with any).
    package func read(in unit: UnitOfWork) async throws -> [UTCDay: [String: Int]] {
        let rows = try await unit.all(
            """
            SELECT (day - DATE '1970-01-01')::integer, family, sum(events)::bigint FROM audit_daily_actions
            WHERE day BETWEEN \(range.from.description)::date AND \(range.through.description)::date
            GROUP BY day, family
            """,
            { try $0.decode((Int32, String, Int64).self) })
        var counts: [UTCDay: [String: Int]] = [:]
        for (day, family, events) in rows { counts[UTCDay(number: Int(day)), default: [:]][family] = Int(events) }
        return counts
    }
}

/// What one verification of the audit log found, as recorded.
package struct AuditVerification: Sendable, Equatable, Encodable {
    package let verifiedAt: Date
    package let intact: Bool
    package let chains: Int
    package let events: Int64
    /// The first bad event, described (nil when intact).
    package let failure: String?
    /// When the checkpoint it compared the chains with was taken (nil without one).
    package let checkpointTakenAt: Date?

    enum CodingKeys: String, CodingKey {
        case verifiedAt = "verified_at", intact, chains, events, failure, checkpointTakenAt = "checkpoint_taken_at"
    }
}

/// Records a verification of the audit log (the API's `POST /v1/audit/verify`), audited as
/// `audit.verify` with what it found, in one transaction after the verification's own snapshot.
package struct RecordAuditVerification: AuditedOperation {
    package static let action: Action = "audit.verify"
    let report: AuditLog.Report
    let checkpointTakenAt: Date?

    package init(_ report: AuditLog.Report, checkpointTakenAt: Date?) {
        (self.report, self.checkpointTakenAt) = (report, checkpointTakenAt)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<AuditVerification> {
        let failure = report.failure.map {
            "\($0.kind.rawValue) at \($0.chain)\($0.seq.map { " seq \($0)" } ?? ""): \($0.detail)"
        }.map { String($0.prefix(2_000)) }
        // A checkpoint's time is the client's word: one from the future is not recorded (it would look fresh forever).
        let checkpointTakenAt = checkpointTakenAt.flatMap { $0 <= unit.now ? $0 : nil }
        let verification = AuditVerification(
            verifiedAt: unit.now, intact: report.failure == nil, chains: report.chains, events: report.events,
            failure: failure, checkpointTakenAt: checkpointTakenAt)
        try await unit.execute(
            """
            INSERT INTO audit_verifications (tenant_id, verified_at, verified_by, intact, chains, events, failure,
                checkpoint_taken_at)
            VALUES (\(unit.principal.tenantID), \(unit.now), \(unit.principal.operatorID), \(verification.intact),
                \(Int32(report.chains)), \(report.events), \(failure), \(checkpointTakenAt))
            """)
        let event = AuditRecord(
            action: Self.action, tenantID: unit.principal.tenantID, targetType: "audit_log", targetID: "verification",
            reason: nil, before: nil, after: try AuditRecord.json(verification))
        return Audited(verification, event: event)
    }
}

/// The newest verification of the audit log the principal's tenant recorded, and the checkpoint
/// the newest verification that had one compared with.
package struct LatestAuditVerification: Query {
    package static let action: Action = "audit.read"

    package init() {}

    package func read(in unit: UnitOfWork) async throws -> (latest: AuditVerification?, checkpointTakenAt: Date?) {
        let latest = try await unit.first(
            """
            SELECT verified_at, intact, chains, events, failure, checkpoint_taken_at FROM audit_verifications
            WHERE tenant_id = \(unit.principal.tenantID) ORDER BY verified_at DESC, id DESC LIMIT 1
            """
        ) {
            let (at, intact, chains, events, failure, checkpoint) = try $0.decode(
                (Date, Bool, Int32, Int64, String?, Date?).self)
            return AuditVerification(
                verifiedAt: at, intact: intact, chains: Int(chains), events: events, failure: failure,
                checkpointTakenAt: checkpoint)
        }
        let checkpoint = try await unit.first(
            """
            SELECT checkpoint_taken_at FROM audit_verifications
            WHERE tenant_id = \(unit.principal.tenantID) AND checkpoint_taken_at IS NOT NULL
            ORDER BY verified_at DESC, id DESC LIMIT 1
            """,
            { try $0.decode(Date?.self) })
        return (latest, checkpoint ?? nil)
    }
}

/// Operators and live tokens by role, for the platform's home (`operators.list`): active people and
/// services by their role, and tokens neither revoked nor expired of active operators by the
/// token's role.
package struct OperatorsByRole: Query {
    package static let action: Action = "operators.list"

    package init() {}

    package struct Row: Sendable, Equatable {
        package let role: String
        package let operators: Int
        package let tokens: Int
    }

    package func read(in unit: UnitOfWork) async throws -> [Row] {
        try await unit.all(
            """
            SELECT role, sum(operators)::bigint, sum(tokens)::bigint FROM (
                SELECT role, count(*) AS operators, 0 AS tokens FROM operators WHERE status = 'active' GROUP BY role
                UNION ALL
                SELECT t.role, 0, count(*) FROM tokens t
                JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id AND o.status = 'active'
                WHERE t.revoked_at IS NULL AND t.expires_at > \(unit.now) GROUP BY t.role) x
            GROUP BY role ORDER BY role
            """,
            {
                let (role, operators, tokens) = try $0.decode((String, Int64, Int64).self)
                return Row(role: role, operators: Int(operators), tokens: Int(tokens))
            })
    }
}
