import BackofficePlatform
import Foundation
import NIOPosix
import Synchronization

/// Where a request's Markdown is rendered (a save's versions, the editor's preview): on threads of
/// their own, never on the event loops or the request's task.
///
/// Guarantees: a text longer than `maxLength` (the longest any save accepts) is refused before any
/// work (422 `too_long` on `body`); every render ends, in time linear in the text (`SafeMarkdown`:
/// cmark and the sanitiser, each one pass), so a render is never abandoned while it runs; at most
/// `admitted` renders wait or run at once, and the next is refused at once (503 `rendering_busy`
/// with Retry-After) rather than queued without bound.
package enum MarkdownRendering {
    /// The threads renders run on.
    package static let threads = 2
    /// Renders waiting or running at once, beyond which a render is refused.
    package static let admitted = 16
    /// The longest text rendered, in Unicode scalars: an article's body, the longest a save takes.
    package static let maxLength = 100_000

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }()
    private static let inPool = Atomic<Int>(0)

    /// Renders waiting or running now.
    package static var pending: Int { inPool.load(ordering: .relaxed) }

    /// Too many renders at once.
    package static let busy = Problem(
        status: 503, code: "rendering_busy", title: "Try again",
        detail: "Too many texts are being rendered at once; nothing was changed. Send it again in a moment.",
        retryAfter: 2)

    /// The refusal of a text longer than `maxLength`.
    static var tooLong: DomainError {
        .invalid([
            FieldIssue(
                field: "body", code: "too_long",
                message: "must be at most \(Validation.grouped(Int64(maxLength))) characters")
        ])
    }

    /// `markdown` rendered and sanitised on the pool; `tooLong` past `maxLength`; `busy` when
    /// `admitted` renders are already under way.
    package static func render(_ markdown: String) async throws -> SafeMarkdown {
        guard markdown.unicodeScalars.count <= maxLength else { throw tooLong }
        return try await run { SafeMarkdown(markdown) }
    }

    /// An editor's preview values (`SafeMarkdown.previewValues`), or `previewTooLong` when the text
    /// is past `maxLength` (the form says so next to the field).
    static func preview(_ markdown: String) async throws -> [String: Any] {
        guard markdown.unicodeScalars.count <= maxLength else { return ["previewTooLong": true] }
        return try await run { SafeMarkdown(markdown) }.previewValues
    }

    /// `work` on the pool under the admission bound (the tests give it work that waits on a gate).
    package static func run(_ work: @escaping @Sendable () -> SafeMarkdown) async throws -> SafeMarkdown {
        guard inPool.add(1, ordering: .relaxed).newValue <= admitted else {
            inPool.subtract(1, ordering: .relaxed)
            throw busy
        }
        defer { inPool.subtract(1, ordering: .relaxed) }
        do {
            return try await pool.runIfActive(work)
        } catch is NIOThreadPoolError.ThreadPoolInactive {
            throw busy
        }
    }
}
