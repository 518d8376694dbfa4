import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite(
    """
    Console accounts: search, lock with a reason and an end, unlock; masked for auditors; the page's version \
    guards the change
    """
)
struct ConsoleAccountsTests {
    func signedIn(_ env: TestEnvironment, _ client: any TestClientProtocol, _ role: Role) async throws -> ConsoleClient
    {
        try await ConsoleClient.signedIn(env, client, as: env.fixture.principals[role]?.operatorID)
    }

    @Test(
        """
        a manager finds an account by email prefix, locks it with a reason until a time (a lock without a reason \
        is refused next to the field), unlocks it; the history shows both, via console
        """
    )
    func lockAndUnlock() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer("console.lock@example.com")
            try await env.withApp { client in
                let manager = try await signedIn(env, client, .backendManager)
                let found = try await manager.get("/console/accounts?email_prefix=console.lock")
                #expect(found.status == 200)
                #expect(found.text.contains("/console/accounts/\(customer.id.text)"))
                let page = try await manager.get("/console/accounts/\(customer.id.text)")
                let csrf = try #require(page.csrf)
                #expect(page.text.contains("Lock account") && !page.text.contains("Unlock account"))
                let path = "/console/accounts/\(customer.id.text)"
                let refused = try await manager.post("\(path)/lock", ["version": "\"1\"", "reason": ""], csrf: csrf)
                #expect(refused.status == 422)
                #expect(refused.text.contains("id=\"reason-error\""))
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM customers WHERE id = '\(customer.id.text)'", as: String.self) == "active")
                let locked = try await manager.post(
                    "\(path)/lock", ["version": "\"1\"", "reason": "Suspected takeover", "until": "2099-01-01T09:30"],
                    csrf: csrf)
                #expect(locked.status == 303)
                let until = try await env.ownerScalar(
                    """
                    SELECT to_char(until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM account_locks WHERE \
                    customer_id = '\(customer.id.text)'
                    """,
                    as: String.self)
                #expect(until == "2099-01-01 09:30", "the end is read as UTC")
                let stale = try await manager.post(
                    "\(path)/unlock", ["version": "\"1\"", "reason": "Old page"], csrf: csrf)
                #expect(stale.status == 422)
                #expect(stale.text.contains("Someone changed this account"))
                let unlocked = try await manager.post(
                    "\(path)/unlock", ["version": "\"2\"", "reason": "Identity confirmed"], csrf: csrf)
                #expect(unlocked.status == 303)
                let history = try await manager.get(path)
                for action in ["accounts.lock", "accounts.unlock"] {
                    #expect(history.text.contains("<code>\(action)</code>"))
                }
                #expect(history.text.contains("Identity confirmed"))
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE target_id = '\(customer.id.text)' AND action IN \
                    ('accounts.lock', 'accounts.unlock') AND session_id IS NOT NULL
                    """,
                    as: Int64.self)
                #expect(viaConsole == 2)
            }
        }
    }

    @Test("a partner has no accounts section (not in its navigation, 403 page); an auditor cannot search by email")
    func whoMaySee() async throws {
        try await TestEnvironment.with { env in
            _ = try await env.customer("console.masked@example.com")
            try await env.withApp { client in
                let partner = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[0].admin.operatorID)
                let home = try await partner.get("/console/home")
                #expect(!home.text.contains("/console/accounts"))
                let refused = try await partner.get("/console/accounts")
                #expect(refused.status == 403)
                #expect(refused.text.contains("Not allowed"))
                let auditor = try await signedIn(env, client, .auditor)
                let search = try await auditor.get("/console/accounts?email_prefix=console")
                #expect(search.status == 200)
                #expect(search.text.contains("cannot search by them"))
                let list = try await auditor.get("/console/accounts")
                #expect(list.text.contains("/console/accounts/"), "an auditor reads the list")
                #expect(!list.text.contains("console.masked@example.com"), "masked")
            }
        }
    }

    @Test(
        """
        a manager resolves an open appeal from the queue: a decision without a reason is refused next to the \
        field; lifting unlocks the account, via console
        """
    )
    func resolveAppeal() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer("console.appeal@example.com")
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "Chargeback"),
                context: env.context(.backendManager))
            let appeal = try await env.database.run(
                FileAppeal(customerID: customer.id, message: "It was my card"), context: env.context(.appService))
            try await env.withApp { client in
                let manager = try await signedIn(env, client, .backendManager)
                let queue = try await manager.get("/console/appeals")
                #expect(queue.status == 200)
                #expect(queue.text.contains("It was my card"))
                let csrf = try #require(queue.csrf)
                let path = "/console/appeals/\(appeal.id.text)/resolve"
                let refused = try await manager.post(
                    path, ["appeal": appeal.id.text, "decision": "lift", "reason": ""], csrf: csrf)
                #expect(refused.status == 422)
                #expect(refused.text.contains("id=\"reason-error-\(appeal.id.text)\""))
                let lifted = try await manager.post(
                    path, ["appeal": appeal.id.text, "decision": "lift", "reason": "Card holder confirmed"], csrf: csrf)
                #expect(lifted.status == 303)
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM customers WHERE id = '\(customer.id.text)'", as: String.self) == "active")
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM appeals WHERE id = '\(appeal.id.text)'", as: String.self) == "lifted")
                let viaConsole = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'appeals.resolve' AND session_id IS NOT NULL",
                    as: Int64.self)
                #expect(viaConsole == 1)
                #expect(
                    !(try await manager.get("/console/appeals")).text.contains("It was my card"),
                    "resolved: no longer in the queue")
            }
        }
    }
}
