import BackofficePlatform
import Foundation

/// Ranks of a leaderboard under a tie policy.
package enum Ranking {
    /// A participant's standing: the score and when it was reached (by activity time).
    package struct Standing: Sendable, Equatable {
        package var customerID: UUID
        package var score: Double
        package var achievedAt: Date
        package init(customerID: UUID, score: Double, achievedAt: Date) {
            (self.customerID, self.score, self.achievedAt) = (customerID, score, achievedAt)
        }
    }

    /// Whether `a` and `b` share a rank under `policy`.
    static func tied(_ a: Standing, _ b: Standing, _ policy: Challenge.TiePolicy) -> Bool {
        policy == .earliest ? a.score == b.score && a.achievedAt == b.achievedAt : a.score == b.score
    }

    /// The ranks of `standings`, which are in board order (best first: score descending, then
    /// earliest achievement, then customer id). `firstRank` is the first standing's rank and
    /// `offset` the number of standings before it on the board (both 0-based context for a page;
    /// 1 and 0 for a whole board).
    ///
    /// - standard ("1224"): tied standings share the rank of the first of them; the next rank is
    ///   its position on the board.
    /// - dense ("1223"): the next rank after a tie is one more.
    /// - earliest: as standard, with equal scores apart unless reached at the same instant.
    package static func ranks(_ standings: [Standing], policy: Challenge.TiePolicy, firstRank: Int = 1, offset: Int = 0)
        -> [Int]
    {
        var ranks: [Int] = []
        ranks.reserveCapacity(standings.count)
        for (index, standing) in standings.enumerated() {
            if index == 0 {
                ranks.append(firstRank)
            } else if tied(standing, standings[index - 1], policy) {
                ranks.append(ranks[index - 1])
            } else {
                ranks.append(policy == .dense ? ranks[index - 1] + 1 : offset + index + 1)
            }
        }
        return ranks
    }
}
