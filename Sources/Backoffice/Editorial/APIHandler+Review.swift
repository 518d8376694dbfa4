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

extension APIHandler {
    /// One move of a reviewed record (`MoveReviewed`) named by the path's `id` (`<noun>_id`): the
    /// record as moved, as the API answers it, and its ETag (the newest version).
    func move<Record: Reviewed, Answer: VersionedAnswer>(
        _ kind: Record.Type, _ move: ReviewMove, _ id: String, ifMatch: String?,
        body: Components.Schemas.ReviewComment? = nil, answer: @escaping @Sendable (Record) throws -> Answer
    ) async throws -> (Answer, String) {
        let id = try parseID(id, "\(Record.noun)_id")
        let answered = try await change(
            MoveReviewed<Record>(id: id, move: move, comment: body?.comment, ifMatch: ifMatch), on: id, body: body,
            respond: answer)
        return (answered, EntityTag.of(Int64(answered.version)))
    }
}
