import Foundation
import NIOCore
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The hot lists a domain registers with the edge (pure)")
struct HotListTests {
    private let lists: [HotList] = [.customers, .orders, .leaderboard]

    @Test("a GET of a registered route finds its list, with the path's {…} segments as written")
    func matchesRegisteredRoutes() throws {
        #expect(lists.find(.get, "/v1/customers")?.route == "/v1/customers")
        #expect(lists.find(.get, "/v1/orders")?.route == "/v1/orders")
        let board = try #require(lists.find(.get, "/v1/challenges/a%20b/leaderboard"))
        #expect(board.route == HotList.leaderboard.route)
        #expect(board.pathSegments == ["a%20b"])
    }

    @Test("anything else goes the generated path: another method, an empty segment, a longer or other path")
    func refusesOthers() {
        #expect(lists.find(.post, "/v1/customers") == nil)
        #expect(lists.find(.head, "/v1/orders") == nil)
        #expect(lists.find(.get, "/v1/challenges//leaderboard") == nil)
        #expect(lists.find(.get, "/v1/customers/7") == nil)
        #expect(lists.find(.get, "/v1/challenges/x/leaderboard/y") == nil)
        #expect(lists.find(.get, "/v1/challenges/x/scores") == nil)
        #expect(lists.find(.get, "/v1/goods") == nil)
    }
}
