import BackofficeAPI
import BackofficePlatform
import Foundation

/// An API answer of a reviewed record, which names its newest version (the ETag).
protocol VersionedAnswer: Codable, Sendable {
    var version: Int { get }
}

extension Components.Schemas.Article: VersionedAnswer {}
extension Components.Schemas.Food: VersionedAnswer {}
extension Components.Schemas.Video: VersionedAnswer {}
extension Components.Schemas.Recipe: VersionedAnswer {}

/// A reviewed record as the API answers it (`api`, its kind's schema).
protocol AnsweredReviewed: Reviewed {
    associatedtype Answer: VersionedAnswer
    var api: Answer { get throws }
}

extension Article: AnsweredReviewed {}
extension Food: AnsweredReviewed {}
extension WorkoutVideo: AnsweredReviewed {}
extension Recipe: AnsweredReviewed {}

/// The headers of a contract response: its ETag and the request's id (which the edge writes).
protocol ETagHeaders {
    init(eTag: String?, xRequestId: String?)
}

/// The JSON body of a contract response, one schema.
protocol JSONBody {
    associatedtype Answer
    static func json(_ answer: Answer) -> Self
}

/// The contract's answer of a reviewed record (`<Kind>AtVersion`): the record, its ETag its newest
/// version, so the next change can name it in If-Match.
protocol RecordAtVersion {
    associatedtype Headers: ETagHeaders
    associatedtype Body: JSONBody where Body.Answer: VersionedAnswer
    init(headers: Headers, body: Body)
}

extension RecordAtVersion {
    init(_ record: Body.Answer) {
        self.init(headers: .init(eTag: EntityTag.of(Int64(record.version)), xRequestId: nil), body: .json(record))
    }
}

/// What every reviewed kind's API shares: one record, a page of them, and the four moves. Each
/// names the record by the path's `<noun>_id` and answers it at its newest version.
extension APIHandler {
    /// The record `id` (`GetReviewed`): another writer's is 404 to an expert.
    func reviewed<Record: AnsweredReviewed, Response: RecordAtVersion>(
        _ kind: Record.Type, _ id: String
    ) async throws -> Response where Response.Body.Answer == Record.Answer {
        Response(try await read(GetReviewed<Record>(id: try parseID(id, "\(Record.noun)_id"))).api)
    }

    /// A page of records in `state` (any state when nil; the review queue oldest first), after `cursor`.
    func reviewedPage<Record: AnsweredReviewed>(
        _ kind: Record.Type, state: String?, cursor: String?, limit: Int?
    ) async throws -> (items: [Record.Answer], nextCursor: String?) {
        let limit = try pageLimit(limit)
        let state = try state.map { try ReviewState(known: $0) }
        let (items, next) = try await ListReviewed<Record>.page(state: state, after: cursor, limit: limit) {
            try await read($0)
        }
        return (try items.map { try $0.api }, next)
    }

    /// A change of a reviewed record (create or update), answered at its newest version.
    func written<Operation: AuditedChange, Response: RecordAtVersion>(
        _ operation: Operation, on id: UUID? = nil, body: some Encodable & Sendable, status: Int = 200
    ) async throws -> Response
    where Operation.Output: AnsweredReviewed, Response.Body.Answer == Operation.Output.Answer {
        Response(try await change(operation, on: id, body: body, status: status) { try $0.api })
    }

    /// A move without a comment (submit, approve).
    func moved<Record: AnsweredReviewed, Response: RecordAtVersion>(
        _ kind: Record.Type, _ move: ReviewMove, _ id: String, ifMatch: String?
    ) async throws -> Response where Response.Body.Answer == Record.Answer {
        try await moved(kind, move, id, ifMatch: ifMatch, comment: nil)
    }

    /// A move with the request's comment (send back, archive): malformed JSON is 400.
    func moved<Record: AnsweredReviewed, Response: RecordAtVersion>(
        _ kind: Record.Type, _ move: ReviewMove, _ id: String, ifMatch: String?, commented body: (some Sendable)?
    ) async throws -> Response where Response.Body.Answer == Record.Answer {
        try await moved(kind, move, id, ifMatch: ifMatch, comment: try json(body) as Components.Schemas.ReviewComment)
    }

    /// One move of a reviewed record (`MoveReviewed`), audited in its transaction.
    private func moved<Record: AnsweredReviewed, Response: RecordAtVersion>(
        _ kind: Record.Type, _ move: ReviewMove, _ id: String, ifMatch: String?,
        comment body: Components.Schemas.ReviewComment?
    ) async throws -> Response where Response.Body.Answer == Record.Answer {
        let id = try parseID(id, "\(Record.noun)_id")
        let moving = MoveReviewed<Record>(id: id, move: move, comment: body?.comment, ifMatch: ifMatch)
        return Response(try await change(moving, on: id, body: body) { try $0.api })
    }
}
