import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// No id supplied from outside names a ledger account that is not its own, and each movement's
/// cause pays once, by the database's own keys (migration 0022).
@Suite("FitPoints ledger identity")
struct LedgerIdentityTests {
    func sync(_ client: any TestClientProtocol, _ env: TestEnvironment, id: String) async throws -> Reply {
        try await client.call(
            .post, "/v1/customers", token: env.fixture.tokens[.appService]!,
            json: #"{"id":"\#(id)","email":"x\#(id.prefix(8))@example.com","display_name":"Thief"}"#)
    }

    func draftChallenge(_ client: any TestClientProtocol, _ env: TestEnvironment, budget: Int) async throws -> String {
        let starts = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(-3600))
        let ends = RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(3600))
        let reply = try await client.call(
            .post, "/v1/challenges", token: env.fixture.tokens[.backendManager]!,
            json: #"""
                {"name":"Spring Steps","metric":"steps","aggregation":"sum","starts_at":"\#(starts)",\#
                "ends_at":"\#(ends)",
                 "budget_points":\#(budget),"rewards":{"ranks":[{"from":1,"to":1,"points":100}]}}
                """#)
        #expect(reply.status == 201, "\(reply.text.prefix(300))")
        return try #require(reply["id"])
    }

    /// What a refused sync must leave: no customer, no audit event, the account as it was.
    func expectNothingWritten(_ env: TestEnvironment, id: String, accountKind: String?) async throws {
        #expect(try await env.ownerScalar("SELECT count(*) FROM customers WHERE id = '\(id)'", as: Int.self) == 0)
        #expect(
            try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_id = '\(id)' AND action = 'accounts.sync'", as: Int.self
            ) == 0)
        #expect(
            try await env.ownerScalar("SELECT kind FROM fitpoints_accounts WHERE id = '\(id)'", as: String.self)
                == accountKind)
    }

    @Test(
        """
        a customer synced with a platform account's id is 409 reserved_customer_id and writes nothing: no wallet \
        is the issuance account
        """
    )
    func platformAccountIDs() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                for (id, kind) in [
                    (Ledger.issuance, "issuance"), (Ledger.redemption, "redemption"), (Ledger.expiry, "expiry"),
                ] {
                    let id = id.uuidString.lowercased()
                    let refused = try await sync(client, env, id: id)
                    #expect(refused.status == 409, "\(refused.text.prefix(300))")
                    #expect(refused["code"] == "reserved_customer_id")
                    try await expectNothingWritten(env, id: id, accountKind: kind)
                    let balance = try await client.call(
                        .get, "/v1/customers/\(id)/fitpoints", token: env.fixture.tokens[.appService]!)
                    #expect(balance.status == 404, "no customer can spend from the \(kind) account")
                }
            }
        }
    }

    @Test(
        """
        a customer synced with a challenge's id is refused (draft or published); the challenge's budget is funded \
        as a budget, never a wallet
        """
    )
    func challengeIDs() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let draft = try await draftChallenge(client, env, budget: 500)
                let refused = try await sync(client, env, id: draft)
                #expect(refused.status == 409, "\(refused.text.prefix(300))")
                #expect(refused["code"] == "reserved_customer_id")
                try await expectNothingWritten(env, id: draft, accountKind: nil)

                #expect(try await client.call(.post, "/v1/challenges/\(draft)/publish", token: manager).status == 200)
                #expect(
                    try await sync(client, env, id: draft)["code"] == "reserved_customer_id",
                    "a published challenge's budget too")
                try await expectNothingWritten(env, id: draft, accountKind: "challenge_budget")
                #expect(
                    try await env.ownerScalar(
                        "SELECT balance FROM fitpoints_accounts WHERE id = '\(draft)'", as: Int64.self) == 500)
            }
            // The database refuses it whatever the service does: a customer row with a challenge's id …
            let challenge = try #require(
                try await env.ownerScalar("SELECT id::text FROM challenges LIMIT 1", as: String.self))
            await #expect(throws: (any Error).self) {
                try await env.asOwner(
                    "INSERT INTO customers (id, email, display_name) VALUES ('\(challenge)', 'raw@example.com', 'Raw')")
            }
            // … and a challenge row with a customer's id.
            let customer = try await env.customer().id.uuidString.lowercased()
            await #expect(throws: (any Error).self) {
                try await env.asOwner(
                    """
                    INSERT INTO challenges SELECT (jsonb_populate_record(NULL::challenges, to_jsonb(c) ||
                        jsonb_build_object('id', '\(customer)'))).*
                    FROM challenges c WHERE c.id = '\(challenge)'
                    """)
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM challenges", as: Int.self) == 1)
            #expect(
                try await env.ownerScalar(
                    "SELECT kind FROM fitpoints_accounts WHERE id = '\(customer)'", as: String.self) == "wallet")
        }
    }

    @Test(
        """
        the database pays each cause once: a second reward of a challenge to a wallet, a badge's second earning, \
        an order's second refund
        """
    )
    func causesPayOnce() async throws {
        try await TestEnvironment.with { env in
            let challenge = try await env.withApp { client in
                let id = try await draftChallenge(client, env, budget: 1000)
                #expect(
                    try await client.call(
                        .post, "/v1/challenges/\(id)/publish", token: env.fixture.tokens[.backendManager]!
                    ).status == 200)
                return id
            }
            let wallet = try await env.customer().id.uuidString.lowercased()
            let order = UUID().uuidString.lowercased()
            let service = env.fixture.principals[.platformAdmin]!
            let causes = [
                "'challenge_reward', '\(challenge)', '\(wallet)', NULL, '\(challenge)'",
                """
                'earning', '\(Ledger.issuance.uuidString.lowercased())', '\(wallet)', \
                'badge:early-bird:\(wallet)', NULL
                """,
                "'refund', '\(Ledger.redemption.uuidString.lowercased())', '\(wallet)', 'order:\(order)', NULL",
            ]
            for cause in causes {
                let insert = """
                    INSERT INTO fitpoints_transfers (movement_id, kind, debit_account, credit_account,
                        source_event_id, challenge_id, amount)
                    SELECT gen_random_uuid(), \(cause), 10
                    """
                #expect(await env.asService(service, insert) == nil, "the first: \(cause)")
                let again = await env.asService(service, insert)
                #expect(again?.status == 409, "the second: \(cause)")
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT balance FROM fitpoints_accounts WHERE id = '\(wallet)'", as: Int64.self) == 30)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }
}
