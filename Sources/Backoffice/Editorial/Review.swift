import BackofficePlatform
import Foundation
import PostgresNIO

/// Where a piece of the experts' content stands (an article, a workout video, a recipe, a food):
/// written as versions that never change, reviewed, then live in the app.
package enum ReviewState: String, Sendable, CaseIterable {
    case draft
    case inReview = "in_review"
    case published, archived
}

/// How reviewed content moves between states, and who may move it: the permission is the kind's
/// own (`articles.approve`, `foods.approve`).
package enum ReviewMove: String, Sendable, CaseIterable {
    /// A draft goes to review (its writer or a manager).
    case submit
    /// The version in review goes live (a manager who wrote no version since the live one).
    case approve
    /// The version in review goes back to draft with the reviewer's comment.
    case sendBack = "send_back"
    /// The content leaves the app for good.
    case archive

    /// The states the move starts from.
    var from: Set<ReviewState> {
        switch self {
        case .submit: [.draft]
        case .approve, .sendBack: [.inReview]
        case .archive: [.draft, .inReview, .published]
        }
    }

    /// Whether the move needs a comment (for the writer, or the record).
    var needsComment: Bool { self == .sendBack || self == .archive }

    /// The move's path under a page or an operation (`send-back`).
    package var path: String { rawValue.replacingOccurrences(of: "_", with: "-") }
}

/// Content the experts write and a second person reviews: a table of records with the review's
/// columns (`author_id`, `state`, `version`, `live_version`, `review_comment`, `reviewed_by`,
/// `reviewed_at`, `submitted_at`, `first_published_at`, `live_at`, `updated_at`, `updated_by`)
/// and a table of versions, only ever added, each with its `written_by`. Its actions are named
/// `<kind>.<move>` (`foods.approve`), `<kind>.list`, `<kind>.read`, `<kind>.update`.
package protocol Reviewed: PlatformOwned, RowDecodable {
    /// The records' table (`articles`) and its alias in `source` (`a`), their versions' table
    /// (`article_versions`), and the versions' column naming the record (`article_id`); the
    /// tables and the column are named by the noun (`Reviewed`'s defaults).
    static var table: String { get }
    static var alias: String { get }
    static var versionTable: String { get }
    static var versionKey: String { get }
    /// The records with their newest version (`articles a JOIN article_versions v …`), read as `columns`.
    static var source: String { get }
    /// What a refusal calls one (`article`).
    static var noun: String { get }

    var id: UUID { get }
    var state: ReviewState { get }
    var version: Int { get }
    var liveVersion: Int? { get }
    var submittedAt: Date? { get }
    var updatedAt: Date { get }
    var updatedBy: UUID { get }
}

extension Reviewed {
    /// A kind's names, from its noun: `<noun>s`, `<noun>_versions`, `<noun>_id`, and its audit
    /// events' target type (`article`).
    package static var table: String { noun + "s" }
    package static var versionTable: String { noun + "_versions" }
    package static var versionKey: String { noun + "_id" }
    package static var auditTargetType: String { noun }

    /// The permission of `move` (`articles.approve`): the kind's table names its actions.
    /// - Precondition: the contract declares it (a kind's operations come with the kind).
    package static func action(_ move: ReviewMove) -> Action { declared("\(table).\(move.rawValue)") }
    /// The permissions to list and to read one.
    package static var listAction: Action { declared("\(table).list") }
    package static var readAction: Action { declared("\(table).read") }

    static func declared(_ name: String) -> Action {
        guard let action = Action(rawValue: name) else {
            preconditionFailure("\(name) is not an action of openapi.yaml (x-action)")
        }
        return action
    }

    /// The record as the principal may see it, locked until the unit ends with `forUpdate`.
    /// - Throws: `DomainError.notFound`, also for another writer's record when the principal sees
    ///   only what it wrote (its existence is not revealed).
    package static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Self {
        let (own, a) = (unit.context.authoredOnly, alias)
        let record = try await unit.first(
            """
            SELECT \(unescaped: columns) FROM \(unescaped: source) WHERE \(unescaped: a).id = \(id)
            AND (NOT \(own) OR \(unescaped: a).author_id = \(unit.principal.operatorID))
            \(unescaped: forUpdate ? "FOR UPDATE OF \(a)" : "")
            """, as: Self.self)
        guard let record else {
            throw DomainError.notFound("\(noun.prefix(1).uppercased() + noun.dropFirst()) \(id.text)")
        }
        return record
    }

    /// The record `id` locked, as a writer may save a new version of it: a draft, or published
    /// (its live version stays while the new one is written and reviewed). In review or archived
    /// is 409; `ifMatch` is required (428) and must name the newest version (412).
    static func forNewVersion(_ id: UUID, ifMatch: String?, in unit: UnitOfWork) async throws -> Self {
        let record = try await fetch(id, forUpdate: true, in: unit)
        guard let ifMatch else { throw DomainError.preconditionRequired }
        try await record.check(ifMatch, in: unit)
        guard record.state == .draft || record.state == .published else {
            throw DomainError.invalidTransition(
                record.state == .inReview
                    ? "\(noun.article.capitalizedFirst) in review changes only after it is sent back."
                    : "An archived \(noun) changes no more.",
                current: record.state.rawValue)
        }
        return record
    }

    /// Makes the version just stored the newest: the record becomes a draft, changed by the principal now.
    static func newVersion(_ version: Int, of id: UUID, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            UPDATE \(unescaped: table) SET version = \(version), state = 'draft', updated_at = \(unit.now),
                updated_by = \(unit.principal.operatorID)
            WHERE id = \(id)
            """)
    }

    /// Throws 412 unless `ifMatch` (when sent) names the newest version; the refusal says who
    /// made the last change and when.
    func check(_ ifMatch: String?, in unit: UnitOfWork) async throws {
        do { try EntityTag.check(ifMatch, version: Int64(version)) } catch DomainError.versionMismatch(
            let current, _, _)
        {
            let who = try await unit.first("SELECT email FROM operators WHERE id = \(updatedBy)") {
                try $0.decode(String.self)
            }
            throw DomainError.versionMismatch(current: current, changedBy: who, at: updatedAt)
        }
    }

    /// Whether `writer` wrote a version newer than the live one (any version while none is live).
    func wroteSinceLive(_ writer: UUID, in unit: UnitOfWork) async throws -> Bool {
        try await unit.first(
            """
            SELECT EXISTS (SELECT 1 FROM \(unescaped: Self.versionTable) WHERE \(unescaped: Self.versionKey) = \(id)
                AND version > \(liveVersion ?? 0) AND written_by = \(writer))
            """
        ) { try $0.decode(Bool.self) } ?? false
    }
}

/// Reviewed content moves (`<kind>.submit`, `.approve`, `.send_back`, `.archive`; the permission
/// is the move's). From a state the move does not start from is 409; `If-Match`, when sent, must
/// name the newest version (412). Approval is refused to whoever wrote any version since the live
/// one (403 `own_version`), not only the newest: an edit by a manager followed by the writer's
/// change of a title is still that manager's text, so every word goes live only after a second
/// person read it.
package struct MoveReviewed<Record: Reviewed>: AuditedChange {
    package let id: UUID
    package let move: ReviewMove
    let comment: String?
    let ifMatch: String?

    package init(id: UUID, move: ReviewMove, comment: String? = nil, ifMatch: String? = nil) {
        (self.id, self.move, self.comment, self.ifMatch) = (id, move, comment, ifMatch)
    }

    package var permission: Action { Record.action(move) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Record> {
        let comment = comment?.trimmingCharacters(in: .whitespacesAndNewlines)
        if move.needsComment {
            var validation = Validation()
            validation.text(comment, "comment", max: 2000)
            try validation.check()
        }
        let before = try await Record.fetch(id, forUpdate: true, in: unit)
        try await before.check(ifMatch, in: unit)
        guard move.from.contains(before.state) else {
            throw DomainError.invalidTransition(
                "Cannot \(move.rawValue.replacingOccurrences(of: "_", with: " ")) \(Record.noun.article) that is "
                    + "\(before.state.rawValue.replacingOccurrences(of: "_", with: " ")).",
                current: before.state.rawValue)
        }
        if move == .approve, let approver = unit.principal.operatorID,
            try await before.wroteSinceLive(approver, in: unit)
        {
            throw DomainError.forbiddenTarget(
                permission, code: "own_version",
                detail: "A version is approved by someone who wrote no version since the live one.")
        }
        try await unit.execute(update(comment: comment, in: unit))
        return try await Record.audited(permission, id, before: before, reason: comment, in: unit)
    }

    private func update(comment: String?, in unit: UnitOfWork) -> PostgresQuery {
        let (who, now, table) = (unit.principal.operatorID, unit.now, Record.table)
        switch move {
        case .submit:
            return """
                UPDATE \(unescaped: table) SET state = 'in_review', submitted_at = \(now), updated_at = \(now),
                    updated_by = \(who)
                WHERE id = \(id)
                """
        case .approve:
            return """
                UPDATE \(unescaped: table) SET state = 'published', live_version = version, live_at = \(now),
                    first_published_at = coalesce(first_published_at, \(now)), review_comment = NULL,
                    reviewed_by = \(who), reviewed_at = \(now), updated_at = \(now), updated_by = \(who)
                WHERE id = \(id)
                """
        case .sendBack:
            return """
                UPDATE \(unescaped: table) SET state = 'draft', review_comment = \(comment), reviewed_by = \(who),
                    reviewed_at = \(now), updated_at = \(now), updated_by = \(who)
                WHERE id = \(id)
                """
        case .archive:
            return """
                UPDATE \(unescaped: table) SET state = 'archived', updated_at = \(now), updated_by = \(who)
                WHERE id = \(id)
                """
        }
    }
}

extension String {
    /// The noun with its indefinite article ("an article", "a food").
    fileprivate var article: String { ("aeiou".contains(first ?? "x") ? "an " : "a ") + self }
    /// The text with its first letter in capitals ("An article").
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// Where a record of reviewed content stands, as its table's review columns say (foods, videos,
/// recipes hold one; articles keep theirs field by field).
package struct ReviewStatus: Sendable, Equatable {
    package var id: UUID
    package var authorID: UUID
    package var state: ReviewState
    package var version: Int
    package var liveVersion: Int?
    package var reviewComment: String?
    package var submittedAt: Date?
    /// When it was first published.
    package var publishedAt: Date?
    package var createdAt: Date
    package var updatedAt: Date
    package var updatedBy: UUID

    /// The review columns of the records aliased `a`, as `init(_:)` reads them (the first eleven).
    static func columns(_ a: String) -> String {
        [
            "id", "author_id", "state", "version", "live_version", "review_comment", "submitted_at",
            "first_published_at",
            "created_at", "updated_at", "updated_by",
        ].map { "\(a).\($0)" }.joined(separator: ", ")
    }

    /// How many columns `columns` names.
    static let count = 11

    init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, String, Int, Int?, String?, Date?, Date?, Date, Date, UUID).self)
        (id, authorID, state, version, liveVersion) = (c.0, c.1, try ReviewState(known: c.2), c.3, c.4)
        (reviewComment, submittedAt, publishedAt, createdAt, updatedAt, updatedBy) = (c.5, c.6, c.7, c.8, c.9, c.10)
    }
}

/// A reviewed record that holds its review columns as one `ReviewStatus`.
package protocol HoldsReviewStatus {
    var review: ReviewStatus { get }
}

extension Reviewed where Self: HoldsReviewStatus {
    package var id: UUID { review.id }
    package var state: ReviewState { review.state }
    package var version: Int { review.version }
    package var liveVersion: Int? { review.liveVersion }
    package var submittedAt: Date? { review.submittedAt }
    package var updatedAt: Date { review.updatedAt }
    package var updatedBy: UUID { review.updatedBy }
}

extension HoldsReviewStatus {
    package var authorID: UUID { review.authorID }
    package var reviewComment: String? { review.reviewComment }
    package var publishedAt: Date? { review.publishedAt }
    package var createdAt: Date { review.createdAt }
}
