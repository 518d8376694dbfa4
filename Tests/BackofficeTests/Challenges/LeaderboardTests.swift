import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension ChallengesTests {
    @Test(
        """
        the leaderboard's hand-written encoder writes exactly the generated encoder's bytes, page after page; bad \
        requests fail alike
        """
    )
    func handEncodedLeaderboard() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            var customers: [String] = []
            for _ in 0..<5 { customers.append(try await env.customer().id.uuidString.lowercased()) }
            let id = try await env.withApp { [customers] client in
                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager,
                        json: #"{"slug":"winter-champion","name":"Winter Champion"}"#
                    ).status
                        == 201)
                let id = try await create(client, env, manager, budget: 1000)
                try await ingest(
                    client, app,
                    [
                        steps("p1", customers[0], 0.1, at: at(env, -900)),
                        steps("p2", customers[0], 0.2, at: at(env, -800)),
                        steps("q1", customers[1], 12000, at: at(env, -700)),
                        steps("r1", customers[2], 12000, at: at(env, -600)),
                        steps("s1", customers[3], 98765.4321, at: at(env, -500)),
                        steps("t1", customers[4], 1e-7, at: at(env, -400)),
                    ])
                return id
            }
            let board = "/v1/challenges/\(id)/leaderboard"
            for token in [app, manager] {
                var uri: String? = board + "?limit=2"
                var pages = 0
                while let current = uri {
                    let fast = try await env.withApp { try await $0.call(.get, current, token: token) }
                    let reference = try await env.withApp(handEncodedLists: false) {
                        try await $0.call(.get, current, token: token)
                    }
                    #expect(fast.status == 200)
                    #expect(fast.text == reference.text, "\(current)")
                    uri = fast["next_cursor"].map { board + "?limit=2&cursor=\($0)" }
                    pages += 1
                }
                #expect(pages == 3)
                let whole = try await env.withApp { try await $0.call(.get, board + "?limit=100", token: token) }
                let reference = try await env.withApp(handEncodedLists: false) {
                    try await $0.call(.get, board + "?limit=100", token: token)
                }
                #expect(whole.text == reference.text)
                #expect(
                    whole.text.contains(#""score":0.30000000000000004"#) && whole.text.contains(#""score":12000}"#),
                    "\(whole.text)")
            }
            for uri in [
                board + "?limit=0", board + "?limit=x", board + "?cursor=nope", "/v1/challenges/nope/leaderboard",
                "/v1/challenges/\(UUID().uuidString)/leaderboard", "/v1/challenges//leaderboard",
                "/v1/challenges/\(id)/x/leaderboard",
            ] {
                let fast = try await env.withApp { try await $0.call(.get, uri, token: app) }
                let reference = try await env.withApp(handEncodedLists: false) {
                    try await $0.call(.get, uri, token: app)
                }
                #expect(
                    fast.status >= 400 && fast.status < 500 && fast.status == reference.status,
                    "\(uri): \(fast.status) \(reference.status)")
                #expect(fast["code"] == reference["code"], "\(uri)")
            }
        }
    }

    @Test(
        """
        readers share a leaderboard page for up to a second: a score changed by another process shows after that, \
        a change through this one at once; the policy is checked on every read
        """
    )
    func sharedLeaderboardPages() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let (a, b) = (
                try await env.customer().id.uuidString.lowercased(), try await env.customer().id.uuidString.lowercased()
            )
            try await env.withApp { client in
                #expect(
                    try await client.call(
                        .post, "/v1/badges", token: manager,
                        json: #"{"slug":"winter-champion","name":"Winter Champion"}"#
                    ).status
                        == 201)
                let id = try await create(client, env, manager, budget: 1000)
                try await ingest(client, app, [steps("a1", a, 100, at: at(env, -600))])
                func scores() async throws -> [Double] {
                    try await client.call(.get, "/v1/challenges/\(id)/leaderboard", token: app).decode(
                        Components.Schemas.Leaderboard.self
                    ).entries
                        .map(\.score)
                }
                #expect(try await scores() == [100])
                // as another process would
                try await env.asOwner("UPDATE challenge_scores SET score = 5000 WHERE customer_id = '\(a)'")
                #expect(try await scores() == [100], "the page read a moment ago is shared")
                try await ingest(client, app, [steps("b1", b, 200, at: at(env, -600))])
                #expect(try await scores() == [5000, 200], "a change committed through this process shows at once")
                let partner = env.fixture.partners[0].adminToken
                #expect(
                    try await client.call(.get, "/v1/challenges/\(id)/leaderboard", token: partner).status == 403,
                    "never served from the cache unchecked")
                try await env.asOwner("UPDATE challenge_scores SET score = 7000 WHERE customer_id = '\(a)'")
                #expect(try await scores() == [5000, 200])
                env.clock.advance(by: 1.1)
                #expect(try await scores() == [7000, 200], "a page is at most a second old")
            }
        }
    }
}
