import Foundation
import PostgresNIO
import Synchronization

/// The generations of the access tokens' signing key that are live (`oauth_signing_keys`): the
/// current one, which signs, and those retired less than `AccessTokens.lifetime` plus a margin ago,
/// which still verify and are still published. Read from the database at most every `refresh`, and
/// at once (at most once a second) when a token names a generation not in the last reading, so a
/// rotation on another server is seen within a second of its first token.
package final class SigningKeyGenerations: Sendable {
    /// How long a retired generation stays accepted: a token's life and a margin for clocks.
    package static let overlap: TimeInterval = AccessTokens.lifetime + 5 * 60
    private let database: Database
    private let refresh: TimeInterval
    private let state = Mutex<(live: [Int], readAt: Date?)>(([], nil))

    package init(database: Database, refresh: TimeInterval = 30) { (self.database, self.refresh) = (database, refresh) }

    /// The live generations, newest first (the first signs).
    package func live(at now: Date, naming generation: Int? = nil) async throws -> [Int] {
        let (live, readAt) = state.withLock { $0 }
        let unknown = generation.map { !live.contains($0) } ?? false
        if let readAt, now.timeIntervalSince(readAt) < (unknown ? 1 : refresh), !live.isEmpty { return live }
        let read = try await Self.read(database)
        state.withLock { $0 = (read, now) }
        return read
    }

    /// Reads the live generations, newest first.
    package static func read(_ database: Database) async throws -> [Int] {
        try await database.transaction(for: .system) { connection in
            var generations: [Int] = []
            for try await row in try await connection.query(
                """
                SELECT generation FROM oauth_signing_keys
                WHERE retired_at IS NULL OR retired_at > now() - make_interval(secs => \(overlap))
                ORDER BY generation DESC
                """, logger: database.logger)
            {
                generations.append(Int(try row.decode(Int32.self)))
            }
            return generations
        }
    }
}

/// The edge's check of an OAuth access token: signed with a live generation, for this service,
/// unexpired (`AccessTokens.verify`).
package struct AccessTokenCheck: Sendable {
    package let tokens: AccessTokens
    package let generations: SigningKeyGenerations

    package init(tokens: AccessTokens, generations: SigningKeyGenerations) {
        (self.tokens, self.generations) = (tokens, generations)
    }

    /// Whether `text` is an access token the service signed that is valid at `now`.
    /// - Throws: when the live generations cannot be read (the database is unavailable).
    package func accepts(_ text: String, at now: Date) async throws -> Bool {
        guard AccessTokens.looksLikeJWT(text), let generation = AccessTokens.generation(of: text) else { return false }
        let live = try await generations.live(at: now, naming: generation)
        return tokens.verify(text, at: now, generations: live) != nil
    }
}
