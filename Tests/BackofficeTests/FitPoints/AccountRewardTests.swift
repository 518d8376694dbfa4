import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Account rewards")
struct AccountRewardTests {
    @Test(
        """
        a subscription that starts or renews earns its event points once per period; a repeated sync earns \
        nothing more
        """
    )
    func subscriptionEvents() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let id = UUID().uuidString.lowercased()
            let renewsAt = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(30 * 86_400))
            let renewedAt = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(60 * 86_400))
            @Sendable func sync(_ client: any TestClientProtocol, _ subscription: String) async throws -> Int {
                try await client.call(
                    .post, "/v1/customers", token: app,
                    json: #"{"id":"\#(id)","email":"sub@example.com","display_name":"Sub",\#(subscription)}"#
                ).status
            }
            try await env.withApp { client in
                #expect(
                    try await client.call(.put, "/v1/fitpoints/rules", token: manager, json: EarningTests.rules).status
                        == 201)
                #expect(try await sync(client, #""subscription":"none""#) == 201)
                #expect(
                    [200, 201].contains(try await sync(client, #""subscription":"active","renews_at":"\#(renewsAt)""#)))
                #expect(try await sync(client, #""subscription":"active","renews_at":"\#(renewsAt)""#) == 200)
                #expect(
                    try await client.call(.get, "/v1/customers/\(id)/fitpoints", token: manager)["balance"] == "0",
                    "no rule pays a start")
                #expect(try await sync(client, #""subscription":"active","renews_at":"\#(renewedAt)""#) == 200)
                #expect(try await sync(client, #""subscription":"active","renews_at":"\#(renewedAt)""#) == 200)
                let ledger = try await client.call(.get, "/v1/customers/\(id)/fitpoints/ledger", token: manager).decode(
                    Components.Schemas.LedgerPage.self)
                #expect(ledger.items.map(\.points) == [200])
                #expect(ledger.items.first?.ruleId == "event:subscription_renewal")
                #expect(ledger.items.first?.sourceEventId == "subscription_renewal:\(id):\(renewedAt)")
            }
            let audited = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_type = 'fitpoints_wallet' AND action = 'accounts.sync'",
                as: Int.self)
            #expect(audited == 1)
        }
    }
}
