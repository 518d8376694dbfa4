import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("FitPoints ledger")
struct FitPointsLedgerTests {
    func adjust(
        _ client: any TestClientProtocol, _ token: String, _ customer: Customer, _ points: Int,
        reason: String? = "goodwill"
    ) async throws
        -> Reply
    {
        let reasonField = reason.map { #","reason":"\#($0)""# } ?? ""
        return try await client.call(
            .post, "/v1/customers/\(customer.id.uuidString.lowercased())/fitpoints/adjustments", token: token,
            json: #"{"points":\#(points)\#(reasonField)}"#)
    }

    func balance(_ client: any TestClientProtocol, _ token: String, _ customer: Customer) async throws
        -> Components.Schemas.FitPointsBalance
    {
        try await client.call(.get, "/v1/customers/\(customer.id.uuidString.lowercased())/fitpoints", token: token)
            .decode(Components.Schemas.FitPointsBalance.self)
    }

    @Test(
        """
        a manager's credit and debit are balanced transfers with the issuance account, audited; an overdraft is \
        409 insufficient_fitpoints and changes nothing
        """
    )
    func adjustments() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            try await env.withApp { client in
                #expect(try await balance(client, manager, customer).balance == 0, "a wallet never used holds nothing")
                let credit = try await adjust(client, manager, customer, 120)
                #expect(credit.status == 201)
                let credited = try credit.decode(Components.Schemas.FitPointsAdjustment.self)
                #expect(credited.entry.points == 120)
                #expect(credited.entry.counterparty == .issuance)
                #expect(credited.entry.reason == "goodwill")
                #expect(credited.balance.balance == 120)

                let debit = try await adjust(client, manager, customer, -20)
                #expect(debit.status == 201)
                #expect(try debit.decode(Components.Schemas.FitPointsAdjustment.self).balance.balance == 100)

                let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let overdraft = try await adjust(client, manager, customer, -101)
                #expect(overdraft.status == 409)
                #expect(overdraft["code"] == "insufficient_fitpoints")
                let after = try await balance(client, manager, customer)
                #expect((after.balance, after.credited, after.debited) == (100, 120, 20))
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events,
                    "the overdraft is not audited")

                #expect(try await adjust(client, manager, customer, 0).status == 422)
                let noReason = try await adjust(client, manager, customer, 5, reason: nil)
                #expect(noReason.status == 422)
                #expect(try noReason.decode(Components.Schemas.Problem.self).errors?.map(\.field) == ["reason"])
                #expect(try await adjust(client, manager, customer, 1_000_001).status == 422)
                #expect(try await adjust(client, env.fixture.tokens[.auditor]!, customer, 5).status == 403)

                let ledger = try await client.call(
                    .get, "/v1/customers/\(customer.id.uuidString.lowercased())/fitpoints/ledger", token: manager
                )
                .decode(Components.Schemas.LedgerPage.self)
                #expect(ledger.items.map(\.points) == [-20, 120], "newest first, signed from the wallet's side")
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'fitpoints.adjust'", as: Int.self) == 2)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
            #expect(
                try await env.ownerScalar(
                    "SELECT balance FROM fitpoints_balances WHERE kind = 'issuance'", as: Int64.self) == -100,
                "what the wallets hold was issued")
            #expect(
                try await env.ownerScalar("SELECT sum(balance)::bigint FROM fitpoints_balances", as: Int64.self) == 0,
                "every movement balances")
        }
    }

    @Test(
        """
        two concurrent debits that together exceed the balance: one succeeds, the other is 409; the balance never \
        goes negative
        """
    )
    func concurrentDebits() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            try await env.withApp { client in
                #expect(try await adjust(client, manager, customer, 100).status == 201)
                for round in 0..<5 {
                    // Each round: two debits of 60 against 100 (after a top-up back to 100).
                    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                        for _ in 0..<2 { group.addTask { try await adjust(client, manager, customer, -60).status } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(statuses.sorted() == [201, 409], "round \(round)")
                    #expect(try await balance(client, manager, customer).balance == 40)
                    #expect(try await adjust(client, manager, customer, 60).status == 201)
                }
                // Ten debits of 30 at once against 100: exactly three fit.
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<10 { group.addTask { try await adjust(client, manager, customer, -30).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 201 }.count == 3)
                #expect(statuses.filter { $0 == 409 }.count == 7)
                #expect(try await balance(client, manager, customer).balance == 10)
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT min(balance) FROM fitpoints_accounts WHERE kind = 'wallet'", as: Int64.self) == 10)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM fitpoints_inconsistent_accounts()", as: Int.self) == 0)
        }
    }

    @Test("every customer has an empty wallet from the statement that creates it, so no movement has to open one")
    func walletsOpenWithCustomers() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            #expect(
                try await env.ownerScalar(
                    "SELECT kind || ' ' || balance FROM fitpoints_accounts WHERE id = '\(customer.id)'", as: String.self
                )
                    == "wallet 0")
            try await env.asOwner(
                """
                INSERT INTO customers (id, email, display_name) SELECT gen_random_uuid(), 'bulk' || i || \
                '@example.com', 'Bulk' FROM generate_series(1, 50) i
                """
            )
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT count(*) FROM customers c LEFT JOIN fitpoints_accounts a ON a.id = c.id AND a.kind = \
                    'wallet' WHERE a.id IS NULL
                    """,
                    as: Int.self) == 0)
        }
    }

    @Test("the ledger is append-only and balances cannot be written by the service role")
    func appendOnly() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            let credited = try await env.withApp { client in try await adjust(client, manager, customer, 50).status }
            #expect(credited == 201)
            for sql in [
                "UPDATE fitpoints_transfers SET amount = 5000",
                "DELETE FROM fitpoints_transfers",
                "UPDATE fitpoints_accounts SET balance = 5000, credited = 5000",
                """
                INSERT INTO fitpoints_accounts (id, kind, balance, credited) VALUES (gen_random_uuid(), 'wallet', \
                9000, 9000)
                """,
            ] {
                let refused = await env.asService(env.fixture.principals[.platformAdmin]!, sql)
                #expect(refused?.status == 403, "\(sql)")
            }
            await #expect(throws: (any Error).self, "even the owner cannot rewrite a transfer") {
                try await env.asOwner("UPDATE fitpoints_transfers SET amount = 5000")
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT balance FROM fitpoints_accounts WHERE id = '\(customer.id)'", as: Int64.self) == 50)
        }
    }

    @Test("a deleted account's wallet is frozen; an unknown customer is 404; the ledger pages")
    func frozenAndPaged() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            try await env.withApp { client in
                for points in 1...5 { #expect(try await adjust(client, manager, customer, points).status == 201) }
                var cursor: String? = nil
                var seen: [Int64] = []
                repeat {
                    let query = cursor.map { "?limit=2&cursor=\($0)" } ?? "?limit=2"
                    let page = try await client.call(
                        .get, "/v1/customers/\(customer.id.uuidString.lowercased())/fitpoints/ledger\(query)",
                        token: manager
                    ).decode(Components.Schemas.LedgerPage.self)
                    seen += page.items.map(\.points)
                    cursor = page.nextCursor
                } while cursor != nil
                #expect(seen == [5, 4, 3, 2, 1])

                let unknown = UUID().uuidString.lowercased()
                #expect(try await client.call(.get, "/v1/customers/\(unknown)/fitpoints", token: manager).status == 404)
                #expect(
                    try await client.call(.get, "/v1/customers/\(unknown)/fitpoints/ledger", token: manager).status
                        == 404)

                let deleted = try await client.call(
                    .delete, "/v1/customers/\(customer.id.uuidString.lowercased())", token: manager,
                    json: #"{"reason":"asked to"}"#)
                #expect(deleted.status == 200)
                let frozen = try await adjust(client, manager, customer, 10)
                #expect(frozen.status == 409)
                #expect(frozen["code"] == "account_deleted")
                #expect(try await balance(client, manager, customer).balance == 15)
            }
        }
    }
}
