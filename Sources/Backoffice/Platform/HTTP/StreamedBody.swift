import Hummingbird
import NIOCore

/// An upload's body as its handler reads it (`x-streamed-body`): what `InputScreen` and the body
/// limit do for a buffered body, done part by part. A part that takes the body past `limit` ends
/// it with 413, a NUL byte with 422 (`InputScreen`), so a handler never sees either.
struct StreamedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let body: RequestBody
    let limit: Int

    init(_ body: RequestBody, limit: Int) {
        self.body = body
        self.limit = limit
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var parts: RequestBody.AsyncIterator
        let limit: Int
        var read = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let part = try await parts.next() else { return nil }
            read += part.readableBytes
            if read > limit { throw Problem.payloadTooLarge }
            if part.readableBytesView.contains(0) { throw InputScreen.nul(in: "body") }
            return part
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parts: body.makeAsyncIterator(), limit: limit) }
}
