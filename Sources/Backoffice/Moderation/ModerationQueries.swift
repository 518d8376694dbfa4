import Foundation
import BackofficeAPI
import PostgresNIO

/// An author's record as the queue shows it: earlier upheld cases, locks, and whether the
/// repeat-offender threshold in force flags them.
package struct AuthorHistory: Sendable, Equatable {
    package var upheldCases: Int
    package var recentUpheldCases: Int
    package var locks: Int
    package var repeatOffender: Bool
}

extension AuthorHistory {
    /// Reads `moderation_author_history`'s three columns from `cells`, flagged by `threshold`.
    init(cells: inout RowCells, threshold: ModerationPolicy.OffenderThreshold) throws {
        upheldCases = Int(try cells.next(Int64.self))
        recentUpheldCases = Int(try cells.next(Int64.self))
        locks = Int(try cells.next(Int64.self))
        repeatOffender = recentUpheldCases >= threshold.upheldCases
    }
}

/// One line of the moderators' queue: an open case with its author's history and who holds it.
package struct QueuedCase: Sendable, Equatable {
    package var moderationCase: ModerationCase
    package var author: AuthorHistory
    package var holderEmail: String?
}

/// The moderators' queue (`moderation.queue`): open cases, most severe first, then oldest, with
/// the reports' count, the content, the author's history (upheld cases, locks, the repeat-offender
/// flag) and who holds each. A keyset page.
package struct ModerationQueue: Query {
    package static let action: Action = "moderation.queue"
    let after: (severity: Int, openedAt: Date, id: UUID)?
    let limit: Int

    package init(after: (severity: Int, openedAt: Date, id: UUID)? = nil, limit: Int = 50) {
        (self.after, self.limit) = (after, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [QueuedCase] {
        let (threshold, since) = try await QueuedCase.window(in: unit)
        let keyset = after ?? (5, Date(timeIntervalSince1970: 0), platformTenantID)  // before every case: severity ≤ 4
        return try await unit.all(
            """
            SELECT \(unescaped: ModerationCase.qualifiedColumns),
                h.upheld, h.recent, h.locks, o.email
            FROM moderation_cases c CROSS JOIN LATERAL moderation_author_history(c.author_id, \(since)) h
            LEFT JOIN operators o ON o.id = c.assigned_to AND c.assigned_until > \(unit.now)
            WHERE c.status = 'open' AND (-c.severity, c.opened_at, c.id) > (\(-keyset.severity), \(keyset.openedAt),
                \(keyset.id))
            ORDER BY c.severity DESC, c.opened_at, c.id LIMIT \(limit)
            """
        ) { try QueuedCase(row: $0, threshold: threshold) }
    }
}

extension QueuedCase {
    /// The repeat-offender threshold in force and the start of its window (`moderation_author_history`'s `since`).
    static func window(in unit: UnitOfWork) async throws -> (ModerationPolicy.OffenderThreshold, Date) {
        let threshold = try await OffenderThresholds.current(in: unit)
        return (threshold, unit.now.addingTimeInterval(-Double(threshold.days) * 86_400))
    }

    /// A row of `ModerationCase.qualifiedColumns`, the author's history (`h.upheld, h.recent,
    /// h.locks`) and the holder's email, flagged by `threshold`.
    init(row: PostgresRow, threshold: ModerationPolicy.OffenderThreshold) throws {
        var cells = RowCells(row, of: "queued case")
        self.init(
            moderationCase: try ModerationCase(cells: &cells),
            author: try AuthorHistory(cells: &cells, threshold: threshold), holderEmail: try cells.next())
    }
}

/// A case with everything a moderator reads before deciding (`moderation.read`): the content, the
/// reports, the decisions so far, the author's history and who holds it.
package struct ReadModerationCase: Query {
    package static let action: Action = "moderation.read"
    let caseID: UUID

    package init(caseID: UUID) { self.caseID = caseID }

    package struct Report: Sendable, Equatable {
        package var reporterID: UUID
        package var reason: String
        package var reportedAt: Date
    }

    package struct Detail: Sendable {
        package var queued: QueuedCase
        package var reports: [Report]
        package var decisions: [ModerationDecision]
    }

    package func read(in unit: UnitOfWork) async throws -> Detail {
        let (threshold, since) = try await QueuedCase.window(in: unit)
        guard
            let queued = try await unit.first(
                """
                SELECT \(unescaped: ModerationCase.qualifiedColumns), h.upheld, h.recent, h.locks, o.email
                FROM moderation_cases c CROSS JOIN LATERAL moderation_author_history(c.author_id, \(since)) h
                LEFT JOIN operators o ON o.id = c.assigned_to AND c.assigned_until > \(unit.now)
                WHERE c.id = \(caseID)
                """, { try QueuedCase(row: $0, threshold: threshold) })
        else { throw DomainError.notFound("Moderation case \(caseID.text)") }
        let reports = try await unit.all(
            """
            SELECT reporter_id, reason, reported_at FROM moderation_reports WHERE case_id = \(caseID)
            ORDER BY reported_at, reporter_id
            """
        ) { row in
            let (reporter, reason, at) = try row.decode((UUID, String, Date).self)
            return Report(reporterID: reporter, reason: reason, reportedAt: at)
        }
        let decisions = try await ModerationDecision.all(ofCase: caseID, in: unit)
        return Detail(queued: queued, reports: reports, decisions: decisions)
    }
}

/// The statement of reasons of one decision (the EU Digital Services Act, Art. 17): what was
/// decided and about which content, the facts, the ground with the guidelines' section, the
/// explanation, whether the detection and the decision were automated, and how to appeal.
package struct StatementOfReasons: Sendable, Equatable, Codable {
    package struct Ground: Sendable, Equatable, Codable {
        package var code: String
        package var label: String
        package var section: String
    }

    package var decisionID: UUID
    package var caseID: UUID
    package var contentKind: ContentKind
    package var contentID: String
    /// Nil once the author was purged.
    package var authorID: UUID?
    package var decision: DecisionKind
    package var removesContent: Bool
    package var accountLocked: Bool
    package var facts: String
    package var grounds: [Ground]
    package var explanation: String
    package var automatedDetection: Bool
    package var automatedDecision: Bool
    package var decidedAt: Date
    package var redress: String
    package var policyDigest: String
    /// The decision's place in the order of decisions (the export's cursor; not encoded).
    var seq: Int64 = 0

    enum CodingKeys: String, CodingKey {
        case decisionID = "decision_id", caseID = "case_id", contentKind = "content_kind", contentID = "content_id"
        case authorID = "author_id", decision, removesContent = "removes_content", accountLocked = "account_locked"
        case facts, grounds, explanation, automatedDetection = "automated_detection"
        case automatedDecision = "automated_decision", decidedAt = "decided_at", redress
        case policyDigest = "policy_digest"
    }
}

extension StatementOfReasons {
    /// The statement of `decision` on `moderationCase` under `policy` (a screen's ground names its
    /// rules; a moderator's, the policy's ground and section).
    init(_ decision: ModerationDecision, on moderationCase: ModerationCase, policy: ModerationPolicy) {
        let grounds: [Ground] =
            decision.automated
            ? decision.ground.split(separator: ",").map {
                Ground(code: String($0), label: "Term rule of the screen", section: "Community guidelines")
            }
            : [
                policy.ground(decision.ground).map { Ground(code: $0.code, label: $0.label, section: $0.section) }
                    ?? Ground(code: decision.ground, label: decision.ground, section: "")
            ]
        self.init(
            decisionID: decision.id, caseID: moderationCase.id, contentKind: moderationCase.contentKind,
            contentID: moderationCase.contentID, authorID: moderationCase.authorID, decision: decision.kind,
            removesContent: decision.removesContent, accountLocked: decision.lockID != nil, facts: decision.facts,
            grounds: grounds, explanation: decision.explanation, automatedDetection: moderationCase.origin == .screen,
            automatedDecision: decision.automated, decidedAt: decision.decidedAt, redress: policy.appeal,
            policyDigest: decision.policyDigest, seq: decision.seq)
    }
}

/// The statements of reasons of a case's decisions (`moderation.statement`), oldest first: the
/// app shows them to the author; moderators and auditors read them.
package struct ReadStatements: Query {
    package static let action: Action = "moderation.statement"
    let caseID: UUID

    package init(caseID: UUID) { self.caseID = caseID }

    package func read(in unit: UnitOfWork) async throws -> [StatementOfReasons] {
        let moderationCase = try await ModerationCase.fetch(caseID, in: unit)
        return try await ModerationDecision.all(ofCase: caseID, in: unit).map {
            StatementOfReasons($0, on: moderationCase, policy: unit.policies.moderation)
        }
    }
}

/// A removal the app applies: the content to take down, and the decision (its statement's id).
package struct Removal: Sendable, Equatable {
    package var seq: Int64
    package var decisionID: UUID
    package var caseID: UUID
    package var contentKind: ContentKind
    package var contentID: String
    package var decision: DecisionKind
    package var decidedAt: Date
}

/// What the app must take down (`moderation.removals`): decisions that removed content, after
/// the cursor `since` (a decision's `seq`), oldest first. Removals commit in `seq` order, so a
/// client that keeps the last `seq` it saw misses none.
package struct ListRemovals: Query {
    package static let action: Action = "moderation.removals"
    let since: Int64
    let limit: Int

    package init(since: Int64?, limit: Int) { (self.since, self.limit) = (since ?? 0, limit) }

    package func read(in unit: UnitOfWork) async throws -> [Removal] {
        try await unit.all(
            """
            SELECT d.seq, d.id, c.id, c.content_kind, c.content_id, d.kind, d.decided_at
            FROM moderation_decisions d JOIN moderation_cases c ON c.id = d.case_id
            WHERE d.removes_content AND d.seq > \(since) ORDER BY d.seq LIMIT \(limit)
            """
        ) { row in
            let (seq, id, caseID, kind, contentID, decision, at) = try row.decode(
                (Int64, UUID, UUID, String, String, String, Date).self)
            return Removal(
                seq: seq, decisionID: id, caseID: caseID, contentKind: try ContentKind(known: kind),
                contentID: contentID, decision: try DecisionKind(known: decision), decidedAt: at)
        }
    }
}

/// Statements of reasons for a transparency report (`moderation.export_statements`): every
/// decision taken in [from, to), one JSON object per line, oldest first, read 1,000 at a time
/// (`ExportPages`), so a year's export never sits in memory.
package struct ExportStatements: Query {
    package static let action: Action = "moderation.export_statements"
    package static let pageSize = 1_000
    let from: Date
    let to: Date
    let afterSeq: Int64

    package init(from: Date, to: Date, afterSeq: Int64 = 0) {
        (self.from, self.to, self.afterSeq) = (from, to, afterSeq)
    }

    package func read(in unit: UnitOfWork) async throws -> [StatementOfReasons] {
        let rows = try await unit.all(
            """
            SELECT \(unescaped: ModerationDecision.qualifiedColumns),
                \(unescaped: ModerationCase.qualifiedColumns)
            FROM moderation_decisions d JOIN moderation_cases c ON c.id = d.case_id
            WHERE d.decided_at >= \(from) AND d.decided_at < \(to) AND d.seq > \(afterSeq)
            ORDER BY d.seq LIMIT \(Self.pageSize)
            """
        ) { row in
            var cells = RowCells(row, of: "statement")
            let decision = try ModerationDecision(cells: &cells)
            return (decision, try ModerationCase(cells: &cells))
        }
        return rows.map { StatementOfReasons($0.0, on: $0.1, policy: unit.policies.moderation) }
    }

    /// The export as pages: `first` (read in the request), then each next page as the client takes it.
    package static func pages(
        first: [StatementOfReasons], from: Date, to: Date, database: Database, context: OperationContext
    ) throws -> ExportPages<Int64> {
        ExportPages(
            database: database, context: context, start: try lines(first), after: position(after: first)
        ) { after, context in
            let page = try await database.read(ExportStatements(from: from, to: to, afterSeq: after), context: context)
            return (try lines(page), position(after: page))
        }
    }

    /// Where the page after `page` starts (nil: it was the last).
    static func position(after page: [StatementOfReasons]) -> Int64? {
        page.count == pageSize ? page.last?.seq : nil
    }

    /// One JSON object per statement, each ending its line: the contract's `StatementOfReasons`,
    /// written as the API writes it (`ContractJSON`: lower-case ids, times with milliseconds).
    package static func lines(_ statements: [StatementOfReasons]) throws -> [UInt8] {
        let encoder = ContractJSON.encoder()
        var out: [UInt8] = []
        for statement in statements {
            out += try encoder.encode(try statement.api)
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }
}

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

/// An author's moderation record for the account page (`moderation.queue`): upheld cases, those
/// within the threshold's days, locks, and the repeat-offender flag with the threshold in force.
package struct ReadAuthorHistory: Query {
    package static let action: Action = "moderation.queue"
    let customerID: UUID

    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> (AuthorHistory, ModerationPolicy.OffenderThreshold) {
        let (threshold, since) = try await QueuedCase.window(in: unit)
        let history = try await unit.first(
            "SELECT upheld, recent, locks FROM moderation_author_history(\(customerID), \(since))"
        ) { row in
            var cells = RowCells(row, of: "author history")
            return try AuthorHistory(cells: &cells, threshold: threshold)
        }
        return (
            history ?? AuthorHistory(upheldCases: 0, recentUpheldCases: 0, locks: 0, repeatOffender: false), threshold
        )
    }
}
