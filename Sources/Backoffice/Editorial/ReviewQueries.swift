import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

/// Reviewed content that lists itself: its records joined with their newest version.
package protocol ListedReviewed: Reviewed, RowDecodable {
    /// The permission to list them (`articles.list`).
    static var listAction: Action { get }
    /// The records with their newest version (`articles a JOIN article_versions v …`), and the
    /// records' alias in it (`a`).
    static var source: String { get }
    static var alias: String { get }
    var submittedAt: Date? { get }
}

/// Reviewed content in every state (`articles.list`, `foods.list`): most recently changed first;
/// in review, the queue's order (oldest submission first). An expert sees only what it wrote.
package struct ListReviewed<Record: ListedReviewed>: Query {
    package static var action: Action { Record.listAction }
    let state: ReviewState?
    let after: (time: Date, id: UUID)?
    let limit: Int

    package init(state: ReviewState?, after: (time: Date, id: UUID)?, limit: Int) {
        (self.state, self.after, self.limit) = (state, after, limit)
    }

    /// The queue is read oldest first by submission; every other list newest first by change.
    package var isQueue: Bool { state == .inReview }

    package func read(in unit: UnitOfWork) async throws -> [Record] {
        let own = unit.context.authoredOnly
        let a = Record.alias
        let key = isQueue ? "\(a).submitted_at" : "\(a).updated_at"
        let (direction, beyond) = isQueue ? ("ASC", ">") : ("DESC", "<")
        return try await unit.all(
            """
            SELECT \(unescaped: Record.columns) FROM \(unescaped: Record.source)
            WHERE (\(state?.rawValue)::text IS NULL OR \(unescaped: a).state = \(state?.rawValue))
              AND (NOT \(own) OR \(unescaped: a).author_id = \(unit.principal.operatorID))
              AND (\(after?.time)::timestamptz IS NULL
                   OR (\(unescaped: key), \(unescaped: a).id) \(unescaped: beyond) (\(after?.time), \(after?.id)))
            ORDER BY \(unescaped: key) \(unescaped: direction), \(unescaped: a).id \(unescaped: direction)
            LIMIT \(limit)
            """)
    }

    /// The page in `state` after `cursor` (the API's and the console's), read by `read`, with the
    /// next page's cursor: keyed by submission in the queue, by change otherwise.
    /// - Throws: `invalid_cursor` (400) for a cursor no page gave.
    static func page(
        state: ReviewState?, after cursor: String?, limit: Int, _ read: (Self) async throws -> [Record]
    ) async throws -> (items: ArraySlice<Record>, nextCursor: String?) {
        let after = try Cursor.timeAndID(cursor).map { (time: $0.createdAt, id: $0.id) }
        let query = Self(state: state, after: after, limit: limit + 1)
        return keysetPage(try await read(query), limit: limit) {
            Cursor.timeAndID(query.isQueue ? $0.submittedAt ?? $0.updatedAt : $0.updatedAt, $0.id)
        }
    }
}
