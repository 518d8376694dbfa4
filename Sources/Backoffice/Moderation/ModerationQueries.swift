import BackofficeAPI
import Foundation
import PostgresNIO
import BackofficePlatform

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
