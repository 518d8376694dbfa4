import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Dual control of challenge budgets (`challenges.create` past 100,000 points in
/// `policies/approvals.yaml`): the draft exists only once a second manager approves it.
@Suite("Two-person approval: challenge budgets")
struct ChallengeBudgetApprovalTests {
    func draft(_ env: TestEnvironment, name: String, budget: Int, endsIn: TimeInterval = 86_400) -> String {
        let (starts, ends) = (ChallengesTests().at(env, 3600), ChallengesTests().at(env, endsIn))
        return #"""
            {"name":"\#(name)","metric":"steps","aggregation":"sum","starts_at":"\#(starts)","ends_at":"\#(ends)",\#
            "budget_points":\#(budget),"rewards":{"ranks":[{"from":1,"to":1,"points":500}]},\#
            "reason":"Spring campaign, agreed with finance"}
            """#
    }

    func challenges(_ env: TestEnvironment, _ name: String) async throws -> Int {
        try await env.ownerScalar("SELECT count(*) FROM challenges WHERE name = '\(name)'", as: Int.self) ?? -1
    }

    @Test(
        """
        a draft with a budget past 100,000 is held (202, no draft yet), at 100,000 it is saved at once; a second \
        manager's approval saves it with its reason, the approver its author; publishing then funds the whole budget
        """
    )
    func heldThenApproved() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let deputy = try await ApprovalTests().secondManager(env, "deputy")
            try await env.withApp { client in
                let small = try await client.call(
                    .post, "/v1/challenges", token: manager, json: draft(env, name: "Small", budget: 100_000))
                #expect(small.status == 201, "at the threshold it is saved at once")
                let held = try await client.call(
                    .post, "/v1/challenges", token: manager, json: draft(env, name: "Spring", budget: 250_000))
                #expect(held.status == 202)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(
                    (request.action, request.amount, request.targetType) == ("challenges.create", 250_000, "challenges")
                )
                #expect(request.summary.contains("Spring") && request.summary.contains("250,000"))
                #expect(request.reason == "Spring campaign, agreed with finance")
                #expect(try await challenges(env, "Spring") == 0, "no draft while held")

                let own = try await ApprovalTests().decide(client, manager, request.id, "approve")
                #expect(own.status == 403 && own["code"] == "own_request")
                let approved = try await ApprovalTests().decide(client, deputy, request.id, "approve")
                #expect(approved.status == 200)
                let saved = try await env.ownerScalar(
                    """
                    SELECT c.id::text || '|' || c.budget_points || '|' || (c.created_by = r.decided_by)::text
                    FROM challenges c, approval_requests r WHERE c.name = 'Spring' AND r.id = '\(request.id)'
                    """, as: String.self)
                let parts = try #require(saved).split(separator: "|").map(String.init)
                #expect(parts.dropFirst() == ["250000", "true"], "the approved draft, its approver its author")
                let reason = try await env.ownerScalar(
                    "SELECT reason FROM audit_events WHERE action = 'challenges.create' AND target_id = '\(parts[0])'",
                    as: String.self)
                #expect(reason == "Spring campaign, agreed with finance")

                let published = try await client.call(.post, "/v1/challenges/\(parts[0])/publish", token: manager)
                #expect(published.status == 200)
                let funded = try await env.ownerScalar(
                    "SELECT balance FROM fitpoints_accounts WHERE id = '\(parts[0])'", as: Int64.self)
                #expect(funded == 250_000)
            }
        }
    }

    @Test("a held draft that could not be saved now is refused at once (422), and nothing is held")
    func refusedUpFront() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let past = try await client.call(
                    .post, "/v1/challenges", token: manager,
                    json: draft(env, name: "Late", budget: 500_000, endsIn: -60))
                #expect(past.status == 422 && past.text.contains("ends_at"))
                #expect(try await env.ownerScalar("SELECT count(*) FROM approval_requests", as: Int.self) == 0)
            }
        }
    }
}
