import BackofficeAPI
import BackofficePlatform
import Foundation
import NIOCore

/// One request for a page of a challenge's leaderboard, however it arrived (generated handler or
/// the hand-encoded fast path): validated once, run once.
struct LeaderboardRequest: Sendable {
    var challengeID: String
    var limit: Int?
    var cursor: String?

    /// Reads `GET /v1/challenges/{challenge_id}/leaderboard` from its path's challenge id (as the
    /// path writes it, percent-encoded) and its query string.
    init(challengeID id: Substring, query: String?) throws {
        let list = try ListQuery(query) { _, _ in }
        let id = String(id)
        self.init(challengeID: id.removingPercentEncoding ?? id, limit: list.limit, cursor: list.cursor)
    }

    init(challengeID: String, limit: Int?, cursor: String?) {
        (self.challengeID, self.limit, self.cursor) = (challengeID, limit, cursor)
    }

    /// How old a page may be: readers within it share one read (`ReadCache`; a change made
    /// through this process shows at once). `as_of` says when the page was read.
    static let maxAge: Duration = .seconds(1)

    /// The page: at most `limit` entries, ranked under the challenge's tie policy, as of its read.
    func run(_ database: Database, context: OperationContext) async throws -> Leaderboard {
        let limit = try pageLimit(limit)
        let id = try parseID(challengeID, "challenge_id")
        let (challenge, entries, readAt) = try await database.read(
            ChallengeLeaderboard(challengeID: id, after: try Cursor.standing(cursor), limit: limit + 1),
            context: context, maxAge: Self.maxAge)
        let (items, next) = keysetPage(entries, limit: limit) {
            [String($0.standing.score)] + Cursor.timeAndID($0.standing.achievedAt, $0.standing.customerID)
        }
        return Leaderboard(
            challengeID: id, state: challenge.state(at: readAt), tiePolicy: challenge.tiePolicy,
            frozen: readAt >= challenge.frozenAt, asOf: readAt,
            entries: items, nextCursor: next)
    }
}

/// A page of a leaderboard as answered.
struct Leaderboard: Sendable {
    var challengeID: UUID
    var state: Challenge.State
    var tiePolicy: Challenge.TiePolicy
    /// The board no longer changes (past `ends_at` + the grace period).
    var frozen: Bool
    var asOf: Date
    var entries: ArraySlice<LeaderboardEntry>
    var nextCursor: String?

    var api: Components.Schemas.Leaderboard {
        get throws {
            .init(
                challengeId: challengeID.text, state: try .init(known: state.rawValue),
                tiePolicy: try .init(known: tiePolicy.rawValue),
                frozen: frozen, asOf: asOf,
                entries: entries.map {
                    .init(
                        rank: $0.rank, customerId: $0.standing.customerID.text, score: $0.standing.score,
                        events: $0.events,
                        achievedAt: $0.standing.achievedAt, reachedTarget: $0.reachedTarget)
                }, nextCursor: nextCursor)
        }
    }
}

/// Writes a leaderboard page as JSON by hand: the same bytes the generated encoder writes (keys
/// sorted, absent values omitted), a test holds the two to byte equality.
enum LeaderboardJSON {
    static func page(_ board: Leaderboard) -> ByteBuffer {
        var out = JSONBytes(capacity: board.entries.count * 190 + 256)
        out.raw("{\"as_of\":")
        out.date(board.asOf)
        out.raw(",\"challenge_id\":")
        out.uuid(board.challengeID)
        out.raw(",\"entries\":[")
        for (index, entry) in board.entries.enumerated() {
            out.raw(index == 0 ? "{\"achieved_at\":" : ",{\"achieved_at\":")
            out.date(entry.standing.achievedAt)
            out.raw(",\"customer_id\":")
            out.uuid(entry.standing.customerID)
            out.raw(",\"events\":")
            out.integer(Int64(entry.events))
            out.raw(",\"rank\":")
            out.integer(Int64(entry.rank))
            out.raw(",\"reached_target\":")
            out.bool(entry.reachedTarget)
            out.raw(",\"score\":")
            out.number(entry.standing.score)
            out.raw("}")
        }
        out.raw("],\"frozen\":")
        out.bool(board.frozen)
        out.optional(",\"next_cursor\":", board.nextCursor)
        out.raw(",\"state\":")
        out.string(board.state.rawValue)
        out.raw(",\"tie_policy\":")
        out.string(board.tiePolicy.rawValue)
        out.raw("}")
        return ByteBuffer(bytes: out.bytes)
    }
}

extension HotList {
    /// `GET /v1/challenges/{challenge_id}/leaderboard`, written by `LeaderboardJSON`.
    static let leaderboard = HotList(route: "/v1/challenges/{challenge_id}/leaderboard") {
        segments, query, database, context in
        HotPage(
            LeaderboardJSON.page(
                try await LeaderboardRequest(challengeID: segments[0], query: query).run(database, context: context)))
    }
}
