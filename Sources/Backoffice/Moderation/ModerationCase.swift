import BackofficePlatform
import Foundation
import PostgresNIO

/// What a case's content is in the app's forum.
package enum ContentKind: String, Sendable, CaseIterable, Codable {
    case post, comment, story
}

/// How a case reached the queue: the screen held or masked it, or customers reported it.
package enum CaseOrigin: String, Sendable, Codable {
    case screen, report
}

/// What a decision does. `mask` and `hold` are the screen's (automated); the rest a moderator's.
package enum DecisionKind: String, Sendable, CaseIterable, Codable {
    case mask, hold, dismiss, remove, warn, lock

    /// The decisions a moderator makes (`dismiss`, `remove`, `warn`, `lock`).
    package static let moderators: [DecisionKind] = [.dismiss, .remove, .warn, .lock]

    /// Whether the content leaves the forum: removed, and its author warned or locked besides.
    package var removesContent: Bool { self == .remove || self == .warn || self == .lock }

    /// Whether the decision upholds the case against the author (it counts towards repeat offences).
    package var upholds: Bool { removesContent }
}

/// One piece of content under moderation: one open case per content (`content_kind`,
/// `content_id`); reports of it fold in, a reporter counted once.
package struct ModerationCase: Sendable, Equatable {
    package var id: UUID
    package var contentKind: ContentKind
    package var contentID: String
    package var contentText: String
    /// The author; nil once purged (the case and its decisions stay, the text erased).
    package var authorID: UUID?
    package var origin: CaseOrigin
    /// 1 low, 2 high, 3 urgent, 4 critical (a life at risk): the queue's first order.
    package var severity: Int
    package var matchedRules: [String]
    package var isOpen: Bool
    package var reportCount: Int
    package var assignedTo: UUID?
    package var assignedUntil: Date?
    package var openedAt: Date
    package var decidedAt: Date?
    package var overturnedAt: Date?
    package var version: Int

    /// Who holds the case at `now` (nil when nobody does, or the hold has expired).
    package func holder(at now: Date) -> UUID? {
        guard let assignedTo, let assignedUntil, assignedUntil > now else { return nil }
        return assignedTo
    }

    /// The audit record of a change to this case (as it now is), `before` nil for a case just opened.
    func event(_ action: Action, reason: String?, before: ModerationCase?) throws -> AuditRecord {
        AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "moderation_case", targetID: id.text,
            reason: reason, before: try before?.snapshot, after: try snapshot)
    }

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let case_id: String, content_kind: String, content_id: String, author_id: String?, status: String
                let severity: Int, reports: Int, rules: [String], assigned_to: String?
            }
            return try AuditRecord.json(
                Snapshot(
                    case_id: id.text, content_kind: contentKind.rawValue, content_id: contentID,
                    author_id: authorID?.text,
                    status: isOpen ? "open" : "decided", severity: severity, reports: reportCount, rules: matchedRules,
                    assigned_to: assignedTo?.text))
        }
    }
}

extension ModerationCase: RowDecodable {
    package static let columns = """
        id, content_kind, content_id, content_text, author_id, opened_by, severity, matched_rules, status, \
        report_count, assigned_to, assigned_until, opened_at, decided_at, overturned_at, version
        """

    /// `columns` with the table's alias `c.` before each.
    static let qualifiedColumns = columns(of: "c")

    /// The facts a screen's matches establish, in words (the screen's decision and a moderator's).
    static func screenFacts(_ rules: [String], in kind: ContentKind) -> String {
        "The screen matched \(rules.joined(separator: ", ")) in the \(kind.rawValue)."
    }

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "moderation case")
        try self.init(cells: &cells)
    }

    /// Reads `columns` from `cells` (the first of a wider row).
    init(cells: inout RowCells) throws {
        id = try cells.next()
        contentKind = try ContentKind(known: cells.next(String.self))
        contentID = try cells.next()
        contentText = try cells.next()
        authorID = try cells.next()
        origin = try CaseOrigin(known: cells.next(String.self))
        severity = Int(try cells.next(Int16.self))
        matchedRules = try cells.next()
        isOpen = try cells.next(String.self) == "open"
        reportCount = Int(try cells.next(Int32.self))
        assignedTo = try cells.next()
        assignedUntil = try cells.next()
        openedAt = try cells.next()
        decidedAt = try cells.next()
        overturnedAt = try cells.next()
        version = Int(try cells.next(Int32.self))
    }

    /// The open case of a content, locked for the unit's change (nil when none is open).
    static func open(_ kind: ContentKind, _ contentID: String, in unit: UnitOfWork) async throws -> ModerationCase? {
        try await unit.first(
            """
            SELECT \(unescaped: columns) FROM moderation_cases
            WHERE content_kind = \(kind.rawValue) AND content_id = \(contentID) AND status = 'open' FOR UPDATE
            """)
    }
}

/// A decision on a case and its statement of reasons: what was decided, on what facts and
/// ground, whether it was automated, by which policy version.
package struct ModerationDecision: Sendable, Equatable {
    package var id: UUID
    package var seq: Int64
    package var caseID: UUID
    package var kind: DecisionKind
    package var automated: Bool
    package var removesContent: Bool
    package var ground: String
    package var facts: String
    package var explanation: String
    package var lockID: UUID?
    package var decidedBy: UUID?
    package var policyDigest: String
    package var decidedAt: Date
}

extension ModerationDecision: RowDecodable {
    package static let columns = """
        id, seq, case_id, kind, automated, removes_content, ground, facts, explanation, lock_id, decided_by, \
        policy_digest, decided_at
        """

    /// `columns` with the table's alias `d.` before each.
    static let qualifiedColumns = columns(of: "d")

    /// A case's decisions, oldest first.
    static func all(ofCase caseID: UUID, in unit: UnitOfWork) async throws -> [ModerationDecision] {
        try await unit.all(
            "SELECT \(unescaped: columns) FROM moderation_decisions WHERE case_id = \(caseID) ORDER BY seq")
    }

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "moderation decision")
        try self.init(cells: &cells)
    }

    /// Reads `columns` from `cells` (the first of a wider row).
    init(cells: inout RowCells) throws {
        id = try cells.next()
        seq = try cells.next()
        caseID = try cells.next()
        kind = try DecisionKind(known: cells.next(String.self))
        automated = try cells.next()
        removesContent = try cells.next()
        ground = try cells.next()
        facts = try cells.next()
        explanation = try cells.next()
        lockID = try cells.next()
        decidedBy = try cells.next()
        policyDigest = try cells.next()
        decidedAt = try cells.next()
    }

    /// Writes a decision on `moderationCase`. A decision that removes content takes the removals'
    /// advisory lock first, so removals commit in `seq` order (the app's feed never skips one).
    static func record(
        _ kind: DecisionKind, on moderationCase: ModerationCase, ground: String, facts: String, explanation: String,
        lockID: UUID? = nil, in unit: UnitOfWork
    ) async throws -> ModerationDecision {
        if kind.removesContent {
            try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('moderation_removals'))")
        }
        let automated = kind == .mask || kind == .hold
        return try await unit.one(
            """
            INSERT INTO moderation_decisions (id, case_id, kind, automated, removes_content, ground, facts, explanation,
                lock_id, decided_by, policy_digest, decided_at)
            VALUES (\(unit.newID()), \(moderationCase.id), \(kind.rawValue), \(automated), \(kind.removesContent),
                \(ground), \(facts), \(explanation), \(lockID), \(automated ? nil : unit.principal.operatorID),
                \(unit.policies.moderation.digest), \(unit.now))
            RETURNING \(unescaped: columns)
            """, else: DomainError.inconsistent("the decision was not returned"))
    }
}

/// A case is read by its id (`fetch`, locked for the unit's change with `forUpdate`).
extension ModerationCase: ReadByID {
    package static let table = "moderation_cases"
    package static let readAction: Action = "moderation.read"
}
