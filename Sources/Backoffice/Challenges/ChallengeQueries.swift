import BackofficePlatform
import Foundation
import PostgresNIO

/// Challenges, newest first, one page (`challenges.list`).
package typealias ListChallenges = ListNewestFirst<Challenge>

extension Challenge: ListedNewestFirst, ReadByID {
    package static let table = "challenges"
    package static let listAction: Action = "challenges.list"
    package static let readAction: Action = "challenges.read"
}

/// One challenge (`challenges.read`).
package typealias GetChallenge = GetByID<Challenge>

/// A leaderboard row: a participant's standing with its rank under the challenge's tie policy.
package struct LeaderboardEntry: Sendable, Equatable {
    package var rank: Int
    package var standing: Ranking.Standing
    package var events: Int
    package var reachedTarget: Bool
    /// The customer's display name, masked for a role that sees personal data masked.
    package var displayName: String
}

/// The live leaderboard of a challenge, one page in board order (`challenges.leaderboard`):
/// read from the incrementally kept scores, never from raw events. Only accounts that are active
/// (neither locked nor deleted) and eligible now (subscribers, when the challenge says so) rank.
package struct ChallengeLeaderboard: CacheableQuery {
    package static let action: Action = "challenges.leaderboard"
    package let challengeID: UUID
    /// The last standing of the previous page.
    package let after: Ranking.Standing?
    package let limit: Int

    package init(challengeID: UUID, after: Ranking.Standing?, limit: Int) {
        (self.challengeID, self.after, self.limit) = (challengeID, after, limit)
    }

    package var cacheKey: String {
        "\(challengeID)|\(limit)|"
            + (after.map {
                "\($0.score.bitPattern)|\($0.achievedAt.timeIntervalSinceReferenceDate.bitPattern)|\($0.customerID)"
            } ?? "top")
    }

    /// The challenge, the page's entries, and when they were read.
    package func read(in unit: UnitOfWork) async throws -> (Challenge, [LeaderboardEntry], readAt: Date) {
        guard let challenge = try await unit.rows(ChallengeByID(id: challengeID)).first else {
            throw DomainError.notFound("Challenge \(challengeID.text)")
        }
        let rows = try await unit.page(limit: limit) { fetch in
            try await Self.standings(fetch, of: challenge, after: after, in: unit)
        }
        guard let first = rows.first else { return (challenge, [], unit.now) }
        var (firstRank, offset) = (1, 0)
        if after != nil {
            guard let counts = try await unit.rows(LeaderboardRankCounts(challenge, before: first.standing)).first
            else {
                throw DomainError.inconsistent("the rank count returned no row")
            }
            firstRank =
                1
                + (challenge.tiePolicy == .standard ? counts.0 : challenge.tiePolicy == .earliest ? counts.1 : counts.2)
            offset = counts.3
        }
        let ranks = Ranking.ranks(
            rows.map(\.standing), policy: challenge.tiePolicy, firstRank: firstRank, offset: offset)
        let entries = zip(rows, ranks).map { row, rank in
            LeaderboardEntry(
                rank: rank, standing: row.standing, events: row.events,
                reachedTarget: challenge.target.map { row.standing.score >= $0 } ?? false,
                displayName: unit.context.masksPII ? PIIMask.name(row.displayName) : row.displayName)
        }
        return (challenge, entries, unit.now)
    }

    /// The condition on `customers c` for ranking in the challenge whose eligibility is a
    /// statement's `$2` (true: subscribers only).
    static let eligible = "c.status = 'active' AND (NOT $2 OR c.subscription = 'active')"

    /// Eligible standings in board order (score descending, earliest achievement, customer id),
    /// after `after`, `Fetch.rows` at most.
    static func standings<Fetch: PageFetch>(
        _: Fetch.Type, of challenge: Challenge, after: Ranking.Standing?, in unit: UnitOfWork
    ) async throws
        -> [BoardRow]
    {
        if let after { return try await unit.rows(LeaderboardPage<BoardAfter, Fetch>(challenge, after: after)) }
        return try await unit.rows(LeaderboardPage<BoardFromTop, Fetch>(challenge))
    }
}

/// What a page after a cursor needs to rank its first standing: how many eligible standings
/// score higher, score higher or reached the same score earlier, how many distinct scores are
/// higher, and how many standings precede it on the board (`$1`, `$2` as `LeaderboardPage`;
/// `$3`–`$5` the page's first standing).
struct LeaderboardRankCounts: PostgresPreparedStatement {
    static let name = "leaderboard_rank_counts"
    static let sql = """
        SELECT count(*) FILTER (WHERE s.score > $3),
               count(*) FILTER (WHERE s.score > $3 OR (s.score = $3 AND s.achieved_at < $4)),
               count(DISTINCT s.score) FILTER (WHERE s.score > $3),
               count(*) FILTER (WHERE s.score > $3 OR (s.score = $3 AND (s.achieved_at < $4 OR (s.achieved_at = $4 AND
                   s.customer_id < $5))))
        FROM challenge_scores s JOIN customers c ON c.id = s.customer_id AND \(ChallengeLeaderboard.eligible)
        WHERE s.challenge_id = $1 AND s.score >= $3
        """
    let page: LeaderboardPage<BoardAfter, DefaultPageFetch>

    init(_ challenge: Challenge, before standing: Ranking.Standing) { page = .init(challenge, after: standing) }

    func makeBindings() throws -> PostgresBindings { try page.makeBindings() }

    func decodeRow(_ row: PostgresRow) throws -> (Int, Int, Int, Int) { try row.decode((Int, Int, Int, Int).self) }
}

/// A standing on a board, how many events made it, and whose it is (the display name).
struct BoardRow: Sendable {
    var standing: Ranking.Standing
    var events: Int
    var displayName: String
}

/// A challenge by id as a prepared statement (read on every leaderboard request).
struct ChallengeByID: PostgresPreparedStatement {
    static let name = "challenge_by_id"
    static let sql = "SELECT \(Challenge.columns) FROM challenges WHERE id = $1"
    let id: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Challenge { try Challenge(row: row) }
}

/// A page of a challenge's board in board order, as a prepared statement planned once per
/// connection: `$1` the challenge, `$2` whether only subscribers rank, and after a cursor `$3`–`$5`
/// the last standing of the previous page. Its literal `LIMIT` keeps the one generic plan (see
/// `PageFetch`); `EntireBoard` reads every standing (settlement).
struct LeaderboardPage<Shape: PageShape, Fetch: PageFetch>: PostgresPreparedStatement {
    static var name: String { "leaderboard_\(Shape.name)_\(Fetch.rows)" }
    static var sql: String {
        """
        SELECT s.customer_id, s.score, s.achieved_at, s.events, c.display_name
        FROM challenge_scores s JOIN customers c ON c.id = s.customer_id AND \(ChallengeLeaderboard.eligible)
        WHERE s.challenge_id = $1\(Shape.filter) ORDER BY s.score DESC, s.achieved_at, s.customer_id LIMIT \(Fetch.rows)
        """
    }
    let challenge: Challenge
    var after: Ranking.Standing? = nil

    init(_ challenge: Challenge, after: Ranking.Standing? = nil) { (self.challenge, self.after) = (challenge, after) }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(challenge.id)
        bindings.append(challenge.eligibility == .subscribers)
        if let after {
            bindings.append(after.score)
            bindings.append(after.achievedAt)
            bindings.append(after.customerID)
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> BoardRow {
        var cells = RowCells(row, of: "challenge_scores")
        let standing = Ranking.Standing(
            customerID: try cells.next(), score: try cells.next(), achievedAt: try cells.next())
        return BoardRow(standing: standing, events: try cells.next(), displayName: try cells.next())
    }
}

/// From the top of the board.
enum BoardFromTop: PageShape {
    static let name = "top"
    static let filter = ""
}

/// After the standing `$3`–`$5` (score, achievement time, customer), in board order.
enum BoardAfter: PageShape {
    static let name = "after"
    static let filter = """
         AND s.score <= $3 AND (s.score < $3 OR (s.score = $3 AND (s.achieved_at > $4
             OR (s.achieved_at = $4 AND s.customer_id > $5))))
        """
}

/// Every standing of a board (settlement ranks them all).
enum EntireBoard: PageFetch { static let rows = Int(Int64.max) }

/// The display names of the customers on a challenge's page (a dry run's payouts), by id, masked for
/// a role that sees personal data masked; an id that names no customer is left out.
struct CustomerNames: Query {
    static let action: Action = ChallengeLeaderboard.action
    let ids: [UUID]

    func read(in unit: UnitOfWork) async throws -> [UUID: String] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await unit.all("SELECT id, display_name FROM customers WHERE id = ANY(\(ids)::uuid[])") {
            try $0.decode((UUID, String).self)
        }
        return Dictionary(rows.map { ($0, unit.context.masksPII ? PIIMask.name($1) : $1) }) { first, _ in first }
    }

    /// A name as a page shows it: a customer without one (or gone) as "(no name)".
    static func shown(_ name: String?) -> String { name.flatMap { $0.isEmpty ? nil : $0 } ?? "(no name)" }
}
