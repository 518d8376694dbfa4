import BackofficeAPI
import Foundation
import PostgresNIO
import BackofficePlatform

/// The repeat-offender threshold in force: the newest saved version, else the policy file's.
package enum OffenderThresholds {
    package static func current(in unit: UnitOfWork) async throws -> ModerationPolicy.OffenderThreshold {
        try await unit.first(
            "SELECT upheld_cases, days FROM moderation_offender_thresholds ORDER BY version DESC LIMIT 1"
        ) { row in
            let (cases, days) = try row.decode((Int32, Int32).self)
            return ModerationPolicy.OffenderThreshold(upheldCases: Int(cases), days: Int(days))
        } ?? unit.policies.moderation.repeatOffenders
    }

    /// How many authors `threshold` flags, judged at each day's end over the past `days` days of
    /// decided cases: the authors with at least `upheldCases` upheld cases within any window of
    /// the threshold's days ending in that period.
    static func flaggedAuthors(
        _ threshold: ModerationPolicy.OffenderThreshold, over days: Int, in unit: UnitOfWork
    ) async throws -> Int {
        try await unit.first(
            """
            WITH upheld AS (
                SELECT c.author_id, c.decided_at FROM moderation_cases c
                WHERE c.status = 'decided' AND c.overturned_at IS NULL
                    AND c.decided_at >= \(unit.now) - make_interval(days => \(Int32(days + threshold.days)))
                    AND EXISTS (SELECT 1 FROM moderation_decisions d WHERE d.case_id = c.id AND d.removes_content))
            SELECT count(DISTINCT a.author_id) FROM upheld a
            WHERE a.decided_at >= \(unit.now) - make_interval(days => \(Int32(days)))
                AND (SELECT count(*) FROM upheld b WHERE b.author_id = a.author_id AND b.decided_at <= a.decided_at
                    AND b.decided_at > a.decided_at - make_interval(days => \(Int32(threshold.days))))
                    >= \(threshold.upheldCases)
            """, { try $0.decode(Int64.self) }
        ).map(Int.init) ?? 0
    }
}

/// Tries a repeat-offender threshold before saving it (`moderation.dry_run_threshold`): how many
/// authors it would have flagged over the past 90 days' cases, beside the threshold in force.
package struct DryRunOffenderThreshold: Query {
    package static let action: Action = "moderation.dry_run_threshold"
    package static let days = 90
    let threshold: ModerationPolicy.OffenderThreshold

    package init(_ threshold: ModerationPolicy.OffenderThreshold) { self.threshold = threshold }

    package struct Outcome: Sendable, Equatable {
        package var days: Int
        package var proposed: ModerationPolicy.OffenderThreshold
        package var flagged: Int
        package var current: ModerationPolicy.OffenderThreshold
        package var currentlyFlagged: Int
    }

    package func read(in unit: UnitOfWork) async throws -> Outcome {
        try OffenderThresholdChange.validate(threshold)
        let current = try await OffenderThresholds.current(in: unit)
        return Outcome(
            days: Self.days, proposed: threshold,
            flagged: try await OffenderThresholds.flaggedAuthors(threshold, over: Self.days, in: unit),
            current: current,
            currentlyFlagged: try await OffenderThresholds.flaggedAuthors(current, over: Self.days, in: unit))
    }
}

/// Saves the repeat-offender threshold (`moderation.set_threshold`): a new version, audited;
/// the same figures again change nothing.
package struct OffenderThresholdChange: AuditedOperation {
    package static let action: Action = "moderation.set_threshold"
    let threshold: ModerationPolicy.OffenderThreshold

    package init(_ threshold: ModerationPolicy.OffenderThreshold) { self.threshold = threshold }

    static func validate(_ threshold: ModerationPolicy.OffenderThreshold) throws {
        var validation = Validation()
        validation.require((1...100).contains(threshold.upheldCases), "upheld_cases", "out_of_range", "1 to 100")
        validation.require((1...365).contains(threshold.days), "days", "out_of_range", "1 to 365")
        try validation.check()
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ModerationPolicy.OffenderThreshold> {
        try Self.validate(threshold)
        try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('moderation_offender_thresholds'))")
        let current = try await OffenderThresholds.current(in: unit)
        if current == threshold { return .unchanged(current) }
        let version =
            try await unit.first(
                "SELECT coalesce(max(version), 0) + 1 FROM moderation_offender_thresholds",
                { try $0.decode(Int32.self) }
            ) ?? 1
        try await unit.execute(
            """
            INSERT INTO moderation_offender_thresholds (version, upheld_cases, days, set_by, set_at)
            VALUES (\(version), \(Int32(threshold.upheldCases)), \(Int32(threshold.days)),
                \(unit.principal.operatorID), \(unit.now))
            """)
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "moderation_threshold",
            targetID: String(version), reason: nil, before: try AuditRecord.json(current),
            after: try AuditRecord.json(threshold))
        return Audited(threshold, event: event)
    }
}
