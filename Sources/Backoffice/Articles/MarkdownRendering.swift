import Foundation
import NIOPosix
import Synchronization

/// Where a request's Markdown is rendered (a save's versions, the editor's preview): on threads
/// of their own, never on the event loops or the request's task, because Ink 0.6.0 has looped for
/// ever on inputs no one had found yet (`SafeMarkdown.guarded` handles those found so far).
///
/// Guarantees: every render answers within `limit` (503 `rendering_timed_out` after it, nothing
/// saved); at most `admitted` renders wait or run at once, counted until they really end, so a
/// render that never ends keeps its place and a flood of them cannot queue without bound (503
/// `rendering_busy` with Retry-After); a looping render pins one of the `threads` threads and
/// nothing else.
package enum MarkdownRendering {
    /// The threads renders run on.
    package static let threads = 2
    /// Renders waiting or running at once, beyond which a render is refused.
    package static let admitted = 16
    /// How long a render may take before its request is answered without it.
    package static let limit: Duration = .seconds(2)

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }()
    private static let inPool = Atomic<Int>(0)

    /// Renders waiting or running now (a looping one included).
    package static var pending: Int { inPool.load(ordering: .relaxed) }

    /// Too many renders at once.
    package static let busy = Problem(
        status: 503, code: "rendering_busy", title: "Try again",
        detail: "Too many texts are being rendered at once; nothing was changed. Send it again in a moment.",
        retryAfter: 2)

    /// A render past `limit`.
    package static let timedOut = Problem(
        status: 503, code: "rendering_timed_out", title: "Text not rendered",
        detail:
            """
            The text took too long to render, so nothing was changed. Simplify its Markdown (raw HTML, deep \
            nesting) and send it again; report the text if it keeps failing.
            """)

    /// `markdown` rendered and sanitised on the pool, or `timedOut` after `limit`, or `busy`.
    package static func render(_ markdown: String, within limit: Duration = limit) async throws -> SafeMarkdown {
        try await run(within: limit) { SafeMarkdown(markdown) }
    }

    /// `work` on the pool under the same bounds (the tests give it a loop that never ends).
    package static func run(within limit: Duration, _ work: @escaping @Sendable () -> SafeMarkdown) async throws
        -> SafeMarkdown
    {
        guard inPool.add(1, ordering: .relaxed).newValue <= admitted else {
            inPool.subtract(1, ordering: .relaxed)
            throw busy
        }
        return try await withCheckedThrowingContinuation { continuation in
            let answer = OneAnswer(continuation)
            let timer = Task {
                // Cancelled: the render answered first.
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                answer.give(.failure(timedOut))
            }
            pool.submit { state in
                defer { inPool.subtract(1, ordering: .relaxed) }
                guard case .active = state else { return answer.give(.failure(busy)) }
                answer.give(.success(work()))
                timer.cancel()
            }
        }
    }

    /// A continuation resumed once, by whichever of the render and the timer answers first.
    private final class OneAnswer: Sendable {
        private let waiting: Mutex<CheckedContinuation<SafeMarkdown, any Error>?>

        init(_ continuation: CheckedContinuation<SafeMarkdown, any Error>) { waiting = Mutex(continuation) }

        func give(_ result: Result<SafeMarkdown, any Error>) {
            waiting.withLock { $0.take() }?.resume(with: result)
        }
    }
}
