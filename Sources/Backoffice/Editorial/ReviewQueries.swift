import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

/// Reviewed content in every state (`articles.list`, `foods.list`): most recently changed first;
/// in review, the queue's order (oldest submission first). An expert sees only what it wrote.
package struct ListReviewed<Record: Reviewed>: Query {
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

/// One record of reviewed content, its newest version (`articles.read`, `foods.read`); another
/// writer's is 404 to an expert.
package struct GetReviewed<Record: Reviewed>: Query {
    package static var action: Action { Record.readAction }
    let id: UUID
    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> Record { try await Record.fetch(id, in: unit) }
}
