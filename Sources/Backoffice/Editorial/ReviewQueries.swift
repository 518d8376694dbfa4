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

/// What one version of a reviewed kind says, read from its version table (alias `v`).
package protocol VersionContent: Sendable, Equatable {
    /// The version's columns (alias `v`), as `init(_:from:)` reads them.
    static var columns: String { get }
    init(_ cells: PostgresRandomAccessRow, from start: Int) throws
}

/// Reviewed content whose versions are read as one `Content` (foods, videos).
package protocol VersionedReviewed: Reviewed {
    associatedtype Content: VersionContent
}

/// One stored version of reviewed content.
package struct ReviewedVersion<Content: VersionContent>: Sendable, Equatable {
    package var version: Int
    package var content: Content
    package var writtenBy: UUID
    package var writtenAt: Date
}

/// Every version of a record, newest first (`<kind>.read`; another writer's is 404 to an expert).
package struct ReviewedVersions<Record: VersionedReviewed>: Query {
    package static var action: Action { Record.readAction }
    let id: UUID
    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> [ReviewedVersion<Record.Content>] {
        let record = try await Record.fetch(id, in: unit)
        return try await unit.all(
            """
            SELECT v.version, v.written_by, v.written_at, \(unescaped: Record.Content.columns)
            FROM \(unescaped: Record.versionTable) v
            WHERE v.\(unescaped: Record.versionKey) = \(record.id) ORDER BY v.version DESC
            """
        ) { row in
            let c = try row.decode((Int, UUID, Date).self)
            return ReviewedVersion(
                version: c.0, content: try Record.Content(row.makeRandomAccess(), from: 3), writtenBy: c.1,
                writtenAt: c.2)
        }
    }
}

/// The emails of the operators who wrote or reviewed records of a kind, by id (`<kind>.read`), for
/// the console's bylines of versions and reviews; an operator no longer visible is left out.
package struct ReviewedWriters<Record: Reviewed>: Query {
    package static var action: Action { Record.readAction }
    let ids: Set<UUID>
    package init(ids: Set<UUID>) { self.ids = ids }

    package func read(in unit: UnitOfWork) async throws -> [UUID: String] {
        let rows = try await unit.all("SELECT id, email FROM operators WHERE id = ANY(\(Array(ids)))") {
            try $0.decode((UUID, String).self)
        }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }
}
