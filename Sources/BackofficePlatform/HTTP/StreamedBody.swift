import Hummingbird
import NIOCore

/// An upload's body as its handler reads it (`x-streamed-body`): what `InputScreen` and the body
/// limit do for a buffered body, done part by part. A part that takes the body past `limit` ends
/// it with 413, a NUL byte with 422 (`InputScreen`), so a handler never sees either.
package struct StreamedBody: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer
    package let body: RequestBody
    package let limit: Int

    package init(_ body: RequestBody, limit: Int) {
        self.body = body
        self.limit = limit
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        package var parts: RequestBody.AsyncIterator
        package let limit: Int
        package var read = 0

        package mutating func next() async throws -> ByteBuffer? {
            guard let part = try await parts.next() else { return nil }
            read += part.readableBytes
            if read > limit { throw Problem.payloadTooLarge }
            if part.readableBytesView.contains(0) { throw InputScreen.nul(in: "body") }
            return part
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parts: body.makeAsyncIterator(), limit: limit) }
}
