import BackofficeAPI
import BackofficePlatform
import Foundation

extension APIHandler {
    /// One move of a reviewed record (`MoveReviewed`): the record as moved, as the API answers
    /// it, and its ETag (the newest version, which `version` reads from the answer).
    func move<Record: Reviewed, Answer: Codable & Sendable>(
        _ kind: Record.Type, _ move: ReviewMove, _ id: UUID, comment: String?, ifMatch: String?,
        body: Components.Schemas.ReviewComment?, version: KeyPath<Answer, Int>,
        answer: @escaping @Sendable (Record) throws -> Answer
    ) async throws -> (Answer, String) {
        let answered = try await change(
            MoveReviewed<Record>(id: id, move: move, comment: comment, ifMatch: ifMatch), on: id, body: body,
            respond: answer)
        return (answered, EntityTag.of(Int64(answered[keyPath: version])))
    }
}
