import BackofficeAPI
import Foundation
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Dual control (`policies/approvals.yaml`): a FitPoints correction past 10,000 points is held and
/// takes effect only when a second eligible person approves it.
@Suite("Two-person approval")
struct ApprovalTests {
    func adjust(
        _ client: any TestClientProtocol, _ token: String, _ customer: Customer, _ points: Int,
        reason: String = "Steps lost in the sync outage", key: String? = nil
    ) async throws -> Reply {
        try await client.call(
            .post, "/v1/customers/\(customer.id.text)/fitpoints/adjustments", token: token,
            json: #"{"points":\#(points),"reason":"\#(reason)"}"#, headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    func decide(_ client: any TestClientProtocol, _ token: String, _ id: String, _ verb: String, note: String? = nil)
        async throws -> Reply
    {
        try await client.call(
            .post, "/v1/approvals/\(id)/\(verb)", token: token, json: note.map { #"{"note":"\#($0)"}"# })
    }

    func balance(_ client: any TestClientProtocol, _ token: String, _ customer: Customer) async throws -> Int64 {
        try await client.call(.get, "/v1/customers/\(customer.id.text)/fitpoints", token: token)
            .decode(Components.Schemas.FitPointsBalance.self).balance
    }

    /// Another backend manager (or a person of `role`), with a token of its own.
    func secondManager(_ env: TestEnvironment, _ name: String = "second", role: Role = .backendManager)
        async throws -> String
    {
        let context = OperationContext.system("test", policies: env.policies)
        let person = try await env.database.runAsSystem(
            CreateOperator(email: "\(name)-\(role.rawValue)@test.example", role: role, tenantID: nil),
            context: context)
        return try await env.database.runAsSystem(
            CreateToken(operatorID: person.id, name: "test", expiresInHours: nil), context: context
        ).1.value
    }

    func count(_ env: TestEnvironment, _ action: String) async throws -> Int {
        try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE action = '\(action)'", as: Int.self) ?? -1
    }

    @Test(
        """
        a correction past the threshold is held (202, nothing credited); the requester's own approval and an \
        auditor's are refused; a second manager's approval credits it, with one audit event per step
        """
    )
    func heldThenApproved() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let second = try await secondManager(env)
            let customer = try await env.customer()
            try await env.withApp { client in
                let small = try await adjust(client, manager, customer, 10_000)
                #expect(small.status == 201, "at the threshold it runs at once")
                let held = try await adjust(client, manager, customer, 50_000)
                #expect(held.status == 202)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(request.status == .pending)
                // The amount counts the account's corrections of the last 24 h with it: 10,000 + 50,000.
                #expect(
                    (request.action, request.amount, request.targetId) == ("fitpoints.adjust", 60_000, customer.id.text)
                )
                #expect(request.summary.contains("+50,000, 10,000 corrected in the last 24 h"), "\(request.summary)")
                #expect(try await balance(client, manager, customer) == 10_000, "nothing credited while held")
                #expect(try await count(env, "approvals.request") == 1)

                let own = try await decide(client, manager, request.id, "approve")
                #expect(own.status == 403)
                #expect(own["code"] == "own_request")
                #expect(try await decide(client, env.fixture.tokens[.auditor]!, request.id, "approve").status == 403)
                #expect(try await balance(client, manager, customer) == 10_000)

                let approved = try await decide(client, second, request.id, "approve", note: "Ticket 4411")
                #expect(approved.status == 200)
                let decided = try approved.decode(Components.Schemas.ApprovalRequest.self)
                #expect((decided.status, decided.decisionNote) == (.approved, "Ticket 4411"))
                #expect(try await balance(client, manager, customer) == 60_000)
                let again = try await decide(client, second, request.id, "approve")
                #expect((again.status, again["code"]) == (409, "approval_decided"))
                #expect(try await balance(client, manager, customer) == 60_000, "approved once, credited once")
            }
            #expect(try await count(env, "approvals.approve") == 1)
            #expect(try await count(env, "fitpoints.adjust") == 2, "the small correction's and the approved one's")
            let actor = try await env.ownerScalar(
                "SELECT actor_id::text FROM audit_events WHERE action = 'fitpoints.adjust' ORDER BY id DESC LIMIT 1",
                as: String.self)
            let approver = try await env.ownerScalar(
                "SELECT actor_id::text FROM audit_events WHERE action = 'approvals.approve'", as: String.self)
            #expect(actor == approver, "the change's own event names the approver as its actor")
        }
    }

    @Test("30 concurrent approvals of one request: one takes effect, the others are 409 approval_decided")
    func concurrentApprovals() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let approvers = [try await secondManager(env), env.fixture.tokens[.platformAdmin]!]
            let customer = try await env.customer()
            try await env.withApp { client in
                let id = try await adjust(client, manager, customer, 25_000)
                    .decode(Components.Schemas.ApprovalRequest.self).id
                let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for n in 0..<30 {
                        group.addTask {
                            let reply = try await decide(client, approvers[n % 2], id, "approve")
                            return (reply.status, reply["code"])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0.0 == 200 }.count == 1, "\(statuses)")
                #expect(statuses.filter { $0 == (409, "approval_decided") }.count == 29, "\(statuses)")
                #expect(try await balance(client, manager, customer) == 25_000)
            }
            #expect(try await count(env, "approvals.approve") == 1)
            #expect(try await count(env, "fitpoints.adjust") == 1)
        }
    }

    @Test("a request undecided past 24 hours expires: approving it is 409 approval_expired and changes nothing")
    func expiredDoesNothing() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let second = try await secondManager(env)
            let customer = try await env.customer()
            try await env.withApp { client in
                let id = try await adjust(client, manager, customer, 20_000)
                    .decode(Components.Schemas.ApprovalRequest.self).id
                env.clock.advance(by: 24 * 3600)
                let late = try await decide(client, second, id, "approve")
                #expect((late.status, late["code"]) == (409, "approval_expired"))
                #expect(try await decide(client, second, id, "reject").status == 409)
                #expect(try await balance(client, manager, customer) == 0)
                let shown = try await client.call(.get, "/v1/approvals/\(id)", token: second)
                    .decode(Components.Schemas.ApprovalRequest.self)
                #expect(shown.status == .expired)
            }
            #expect(try await count(env, "approvals.approve") == 0)
            #expect(try await count(env, "fitpoints.adjust") == 0)
        }
    }

    @Test(
        """
        a request that could not take effect is refused as the change would be, and nothing is held; a repeat \
        under one Idempotency-Key holds one request; a rejected or withdrawn request never takes effect
        """
    )
    func refusedRepeatedRejected() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let second = try await secondManager(env)
            let customer = try await env.customer()
            try await env.withApp { client in
                let overdraft = try await adjust(client, manager, customer, -50_000)
                #expect((overdraft.status, overdraft["code"]) == (409, "insufficient_fitpoints"))
                #expect(try await adjust(client, manager, customer, 50_000, reason: " ").status == 422)
                #expect(try await env.ownerScalar("SELECT count(*) FROM approval_requests", as: Int.self) == 0)

                let key = UUID().uuidString
                let first = try await adjust(client, manager, customer, 30_000, key: key)
                let repeated = try await adjust(client, manager, customer, 30_000, key: key)
                #expect(first.status == 202 && repeated.status == 202)
                let id = try first.decode(Components.Schemas.ApprovalRequest.self).id
                #expect(try repeated.decode(Components.Schemas.ApprovalRequest.self).id == id)
                #expect(try await env.ownerScalar("SELECT count(*) FROM approval_requests", as: Int.self) == 1)

                let rejected = try await decide(client, second, id, "reject", note: "No ticket")
                #expect(try rejected.decode(Components.Schemas.ApprovalRequest.self).status == .rejected)
                #expect(try await decide(client, second, id, "approve").status == 409)

                let mine = try await adjust(client, manager, customer, 40_000)
                    .decode(Components.Schemas.ApprovalRequest.self).id
                let withdrawn = try await decide(client, manager, mine, "reject")
                #expect(withdrawn.status == 200, "the requester withdraws it: \(withdrawn.text)")
                #expect(try await balance(client, manager, customer) == 0)
            }
            #expect(try await count(env, "approvals.reject") == 2)
        }
    }

    @Test("another tenant sees none of the platform's requests; a held change cannot be run directly")
    func tenantsAndTheRunnersGuard() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            let partner = env.fixture.partners[0].adminToken
            try await env.withApp { client in
                let id = try await adjust(client, manager, customer, 30_000)
                    .decode(Components.Schemas.ApprovalRequest.self).id
                let listed = try await client.call(.get, "/v1/approvals", token: partner)
                #expect(listed.status == 200 && !listed.text.contains(id), "a shop's admin lists only its shop's")
                #expect(try await client.call(.get, "/v1/approvals/\(id)", token: partner).status == 404)
                #expect(try await decide(client, partner, id, "approve").status == 404)
                // A machine client of an approver's role holding every scope it needs is still no person.
                let (bot, secret) = try await env.database.runAsSystem(
                    RegisterOAuthClient(
                        name: "bot", role: .backendManager, tenantID: nil,
                        scopes: ["approvals:decide", "fitpoints:adjust"], allowedAddresses: nil),
                    context: .system("test", policies: env.policies))
                let basic = "Basic " + Data("\(bot.id.text):\(try #require(secret).value)".utf8).base64EncodedString()
                let jwt = try #require(
                    try await OAuthClientTests.token(client, form: "grant_type=client_credentials", basic: basic)[
                        "access_token"])
                let byMachine = try await decide(client, jwt, id, "approve")
                #expect((byMachine.status, byMachine["code"]) == (403, "not_an_approver"))
                let own = try await client.call(.get, "/v1/approvals", token: manager)
                    .decode(Components.Schemas.ApprovalRequestPage.self)
                #expect(own.items.map(\.id) == [id])
            }
            do {
                _ = try await env.database.run(
                    AdjustFitPoints(customerID: customer.id, points: 30_000, reason: "direct"),
                    context: env.context(.backendManager))
                Issue.record("a held change ran directly")
            } catch DomainError.conflict(let code, _) {
                #expect(code == "approval_required")
            }
        }
    }
}

extension ApprovalTests {
    @Test("the service's role can neither rewrite what was asked nor decide a request twice, whatever the code does")
    func decidedOnceInTheDatabase() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let request = try await env.database.run(
                RequestApproval(change: AdjustFitPoints(customerID: customer.id, points: 20_000, reason: "Test")),
                context: env.context(.backendManager))
            let admin = env.fixture.principals[.platformAdmin]!
            func update(_ set: String) async throws {
                try await env.database.transaction(for: admin) { connection in
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "UPDATE approval_requests SET \(set) WHERE id = '\(request.id.text)'"),
                        logger: testLogger
                    ).collect()
                }
            }
            await #expect(throws: (any Error).self, "the change asked for is not the service's to rewrite") {
                try await update("change = '{\"points\": 1000000}'::jsonb")
            }
            await #expect(throws: (any Error).self) { try await update("amount = 1") }
            _ = try await env.database.run(
                DecideApproval(.reject, approvalID: request.id, note: "no"), context: env.context(.platformAdmin))
            await #expect(throws: (any Error).self, "a decided request is not decided again") {
                try await update("status = 'approved'")
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT status FROM approval_requests WHERE id = '\(request.id.text)'", as: String.self)
                    == "rejected")
        }
    }
}

@Suite("policies/approvals.yaml")
struct ApprovalPolicyTests {
    static var texts: [String: String] {
        get throws { try PolicySet.texts(in: URL(fileURLWithPath: CodeShapeTests.root + "/policies")) }
    }

    @Test("every action the policy may hold is a change that can be held (and performed when approved)")
    func everyRuleHoldsAKnownChange() throws {
        let policy = try PolicySet.parse(try Self.texts).approvals
        let held = Set(DualControlledChanges.all.map { $0.action })
        #expect(!policy.rules.isEmpty)
        for action in policy.rules.keys { #expect(held.contains(action), "\(action) cannot be held") }
        #expect(policy.expiresAfterHours == 24)
    }

    @Test(
        "an undeclared action, an unknown key, no approvers, an unknown role or a threshold out of range is refused",
        arguments: [
            "requests: {expires_after_hours: 24}\nfitpoints.teleport: {approvers: [backend_manager]}",
            "requests: {expires_after_hours: 24}\nfitpoints.adjust: {approvers: [backend_manager], maybe: 1}",
            "requests: {expires_after_hours: 24}\nfitpoints.adjust: {approvers: []}",
            "requests: {expires_after_hours: 24}\nfitpoints.adjust: {approvers: [chief]}",
            "requests: {expires_after_hours: 24}\nfitpoints.adjust: {over: 0, approvers: [backend_manager]}",
            "requests: {expires_after_hours: 0}\nfitpoints.adjust: {approvers: [backend_manager]}",
            "requests: {expires_after_hours: 24}\naccounts.lock: {approvers: [backend_manager]}",
            "requests: {expires_after_hours: 24}\nfitpoints.adjust: {approvers: [auditor]}",
        ])
    func refusesABadPolicy(text: String) throws {
        var texts = try Self.texts
        texts[ApprovalPolicy.file] = text
        #expect(throws: PolicyError.self) { try PolicySet.parse(texts) }
    }
}
