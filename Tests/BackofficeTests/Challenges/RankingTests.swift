import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Ranking (pure)")
struct RankingTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    func standings(_ scores: [(Double, TimeInterval)]) -> [Ranking.Standing] {
        scores.map { Ranking.Standing(customerID: UUID(), score: $0.0, achievedAt: t0.addingTimeInterval($0.1)) }
    }

    @Test(
        """
        standard is 1224, dense 1223, earliest breaks ties by who reached the score first (and shares a rank at \
        the same instant)
        """
    )
    func policies() {
        let board = standings([(10, 3), (10, 5), (10, 9), (8, 1), (5, 1)])
        #expect(Ranking.ranks(board, policy: .standard) == [1, 1, 1, 4, 5])
        #expect(Ranking.ranks(board, policy: .dense) == [1, 1, 1, 2, 3])
        #expect(Ranking.ranks(board, policy: .earliest) == [1, 2, 3, 4, 5])
        #expect(Ranking.ranks(standings([(10, 3), (10, 3), (9, 1)]), policy: .earliest) == [1, 1, 3])
    }

    @Test("a page's ranks continue from the rank and position of its first standing")
    func pages() {
        let board = standings([(10, 3), (10, 5), (10, 9), (8, 1), (5, 1), (5, 2)])
        let whole = Ranking.ranks(board, policy: .standard)
        #expect(Ranking.ranks(Array(board[2...]), policy: .standard, firstRank: 1, offset: 2) == Array(whole[2...]))
        let dense = Ranking.ranks(board, policy: .dense)
        #expect(Ranking.ranks(Array(board[3...]), policy: .dense, firstRank: 2, offset: 3) == Array(dense[3...]))
    }

    @Test("ISO 8601 durations of days and times; years and months refused")
    func durations() {
        #expect(ISODuration.seconds("P2D") == 172_800)
        #expect(ISODuration.seconds("PT36H") == 129_600)
        #expect(ISODuration.seconds("P1DT12H30M") == 131_400)
        #expect(ISODuration.seconds("P1W") == 604_800)
        #expect(ISODuration.seconds("PT0S") == 0)
        for bad in ["P1M", "P1Y", "2D", "P", "PT", "P1DT", "P-1D", "P1.5D"] {
            #expect(ISODuration.seconds(bad) == nil, "\(bad)")
        }
    }
}
