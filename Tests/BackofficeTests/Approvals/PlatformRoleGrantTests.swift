import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// Dual control of platform role grants (`operators.create` in `policies/approvals.yaml`): a new
/// operator of the platform exists only once a second platform admin approves it; a partner's
/// roles are never held.
@Suite("Two-person approval: platform role grants")
struct PlatformRoleGrantTests {
    func operators(_ env: TestEnvironment, _ email: String) async throws -> Int {
        try await env.ownerScalar("SELECT count(*) FROM operators WHERE email = '\(email)'", as: Int.self) ?? -1
    }

    @Test(
        """
        a platform admin's grant of a platform role is held (202, no operator yet); the requester and a backend \
        manager may not approve it; a second platform admin's approval creates it, with the request's reason
        """
    )
    func heldThenApproved() async throws {
        try await TestEnvironment.with { env in
            let admin = env.fixture.tokens[.platformAdmin]!
            let second = try await ApprovalTests().secondManager(env, role: .platformAdmin)
            let deputy = try await ApprovalTests().secondManager(env, "deputy")
            try await env.withApp { client in
                let held = try await client.call(
                    .post, "/v1/operators", token: admin,
                    json: #"{"email":"New.Auditor@HealthTrack.example","role":"auditor","reason":"Quarterly audit"}"#)
                #expect(held.status == 202)
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(
                    (request.action, request.reason, request.targetType) == (
                        "operators.create", "Quarterly audit", "people"
                    ))
                #expect(request.summary == "Grant the platform role auditor to new.auditor@healthtrack.example")
                #expect(try await operators(env, "new.auditor@healthtrack.example") == 0, "nothing granted while held")

                let own = try await ApprovalTests().decide(client, admin, request.id, "approve")
                #expect(own.status == 403 && own["code"] == "own_request")
                let manager = try await ApprovalTests().decide(client, deputy, request.id, "approve")
                #expect(manager.status == 403 && manager["code"] == "not_an_approver", "only a platform admin approves")
                #expect(try await operators(env, "new.auditor@healthtrack.example") == 0)

                let approved = try await ApprovalTests().decide(client, second, request.id, "approve")
                #expect(approved.status == 200 && approved["status"] == "approved")
                #expect(try await operators(env, "new.auditor@healthtrack.example") == 1)
                let event = try await env.ownerScalar(
                    """
                    SELECT coalesce(e.reason, '-') || '|' || coalesce((e.actor_id = r.decided_by)::text, '-')
                    FROM audit_events e, approval_requests r
                    WHERE e.action = 'operators.create' AND e.after::text LIKE '%new.auditor@%'
                        AND r.id = '\(request.id)'
                    """, as: String.self)
                #expect(event == "Quarterly audit|true", "the grant's own event, its reason, the approver its actor")
            }
        }
    }

    @Test("a partner admin's staff and a platform admin's partner roles are created at once, never held")
    func partnerRolesAreNotHeld() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let tenant = partner.tenantID.text
            try await env.withApp { client in
                let staff = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"picker@green-grocer.example","role":"partner_staff"}"#)
                #expect(staff.status == 201)
                let platformMade = try await client.call(
                    .post, "/v1/operators", token: env.fixture.tokens[.platformAdmin]!,
                    json:
                        #"{"email":"owner@green-grocer.example","role":"partner_admin","tenant_id":"\#(tenant)"}"#
                )
                #expect(platformMade.status == 201)
                let held = try await env.ownerScalar("SELECT count(*) FROM approval_requests", as: Int.self)
                #expect(held == 0)
            }
        }
    }

    @Test("in the console, a platform role's invitation is held: the flash says so and People shows it pending")
    func consoleGrantIsHeld() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp(trustedProxies: [try CIDR("10.0.0.0/8")]) { client in
                let platform = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.platformAdmin]?.operatorID)
                let page = try await platform.get("/console/people")
                #expect(!page.text.contains("id=\"pending-approvals\""))
                let held = try await platform.post(
                    "/console/people/new",
                    ["email": "ops@healthtrack.example", "role": "backend_manager", "reason": "New ops hire"],
                    csrf: page.csrf)
                #expect(held.status == 303 && held.location == "/console/people")
                #expect(try await operators(env, "ops@healthtrack.example") == 0)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM outbox WHERE kind = 'invitation'", as: Int.self)
                        == 0, "no invitation before the grant is approved")
                let after = try await platform.get("/console/people")
                #expect(after.text.contains("id=\"pending-approvals\""))
                #expect(after.text.contains("Grant the platform role backend_manager to ops@healthtrack.example"))
            }
        }
    }
}
