import Foundation
import PostgresNIO

/// Challenges, newest first, one page (`challenges.list`).
public struct ListChallenges: Query {
    public static let action: Action = "challenges.list"
    public let after: (createdAt: Date, id: UUID)?
    public let limit: Int
    public init(after: (createdAt: Date, id: UUID)?, limit: Int) { (self.after, self.limit) = (after, limit) }

    public func read(in unit: UnitOfWork) async throws -> [Challenge] {
        try await unit.newestFirst("challenges", after: after, limit: limit)
    }
}

/// One challenge (`challenges.read`).
public struct GetChallenge: Query {
    public static let action: Action = "challenges.read"
    public let id: UUID
    public init(id: UUID) { self.id = id }
    public func read(in unit: UnitOfWork) async throws -> Challenge { try await Challenge.fetch(id, in: unit) }
}

/// A leaderboard row: a participant's standing with its rank under the challenge's tie policy.
public struct LeaderboardEntry: Sendable, Equatable {
    public var rank: Int
    public var standing: Ranking.Standing
    public var events: Int
    public var reachedTarget: Bool
}

/// The live leaderboard of a challenge, one page in board order (`challenges.leaderboard`):
/// read from the incrementally kept scores, never from raw events. Only accounts that are active
/// (neither locked nor deleted) and eligible now (subscribers, when the challenge says so) rank.
public struct ChallengeLeaderboard: Query {
    public static let action: Action = "challenges.leaderboard"
    public let challengeID: UUID
    /// The last standing of the previous page.
    public let after: Ranking.Standing?
    public let limit: Int

    public init(challengeID: UUID, after: Ranking.Standing?, limit: Int) { (self.challengeID, self.after, self.limit) = (challengeID, after, limit) }

    public func read(in unit: UnitOfWork) async throws -> (Challenge, [LeaderboardEntry]) {
        let challenge = try await Challenge.fetch(challengeID, in: unit)
        let rows = try await Self.standings(of: challenge, after: after, limit: limit, in: unit)
        guard let first = rows.first else { return (challenge, []) }
        var (firstRank, offset) = (1, 0)
        if after != nil {
            let eligible = Self.eligible(challenge)
            guard
                let counts = try await unit.first(
                    """
                    SELECT count(*) FILTER (WHERE s.score > \(first.0.score)),
                           count(*) FILTER (WHERE s.score > \(first.0.score) OR (s.score = \(first.0.score) AND s.achieved_at < \(first.0.achievedAt))),
                           count(DISTINCT s.score) FILTER (WHERE s.score > \(first.0.score)),
                           count(*) FILTER (WHERE s.score > \(first.0.score) OR (s.score = \(first.0.score) AND (s.achieved_at < \(first.0.achievedAt)
                               OR (s.achieved_at = \(first.0.achievedAt) AND s.customer_id < \(first.0.customerID)))))
                    FROM challenge_scores s JOIN customers c ON c.id = s.customer_id AND \(unescaped: eligible)
                    WHERE s.challenge_id = \(challenge.id) AND s.score >= \(first.0.score)
                    """, { try $0.decode((Int, Int, Int, Int).self) })
            else { throw DomainError.inconsistent("the rank count returned no row") }
            firstRank = 1 + (challenge.tiePolicy == .standard ? counts.0 : challenge.tiePolicy == .earliest ? counts.1 : counts.2)
            offset = counts.3
        }
        let ranks = Ranking.ranks(rows.map(\.0), policy: challenge.tiePolicy, firstRank: firstRank, offset: offset)
        let entries = zip(rows, ranks).map { row, rank in
            LeaderboardEntry(rank: rank, standing: row.0, events: row.1, reachedTarget: challenge.target.map { row.0.score >= $0 } ?? false)
        }
        return (challenge, entries)
    }

    /// The condition on `customers c` for ranking in `challenge`.
    static func eligible(_ challenge: Challenge) -> String {
        challenge.eligibility == .subscribers ? "c.status = 'active' AND c.subscription = 'active'" : "c.status = 'active'"
    }

    /// Eligible standings in board order (score descending, earliest achievement, customer id),
    /// after `after`, at most `limit` (all without a limit).
    static func standings(of challenge: Challenge, after: Ranking.Standing?, limit: Int?, in unit: UnitOfWork) async throws
        -> [(Ranking.Standing, Int)]
    {
        let board = "FROM challenge_scores s JOIN customers c ON c.id = s.customer_id AND \(eligible(challenge))"
        let order = "ORDER BY s.score DESC, s.achieved_at, s.customer_id"
        let query: PostgresQuery =
            if let after {
                """
                SELECT s.customer_id, s.score, s.achieved_at, s.events \(unescaped: board)
                WHERE s.challenge_id = \(challenge.id) AND (s.score < \(after.score) OR (s.score = \(after.score) AND (s.achieved_at > \(after.achievedAt)
                    OR (s.achieved_at = \(after.achievedAt) AND s.customer_id > \(after.customerID)))))
                \(unescaped: order) LIMIT \(limit ?? Int.max)
                """
            } else {
                "SELECT s.customer_id, s.score, s.achieved_at, s.events \(unescaped: board) WHERE s.challenge_id = \(challenge.id) \(unescaped: order) LIMIT \(limit ?? Int.max)"
            }
        var rows: [(Ranking.Standing, Int)] = []
        for try await (customer, score, achievedAt, events) in try await unit.connection.query(query, logger: unit.logger).decode(
            (UUID, Double, Date, Int).self)
        {
            rows.append((Ranking.Standing(customerID: customer, score: score, achievedAt: achievedAt), events))
        }
        return rows
    }
}
