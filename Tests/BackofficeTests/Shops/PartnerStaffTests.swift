import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Partner staff: a partner admin runs its own shop's people")
struct PartnerStaffTests {
    @Test("invite, list, issue a token, disable; never a platform role, never another tenant, never the last admin")
    func partnerAdminManagesItsStaff() async throws {
        try await TestEnvironment.with { env in
            let (a, b) = (env.fixture.partners[0], env.fixture.partners[1])
            try await env.withApp { client in
                let invited = try await client.call(
                    .post, "/v1/operators", token: a.adminToken,
                    json: #"{"email": "picker@\#(a.slug).example", "role": "partner_staff"}"#)
                #expect(invited.status == 201, "\(invited.text)")
                #expect(invited["tenant_id"] == a.tenantID.uuidString.lowercased())
                let staffID = try #require(invited["id"])
                let token = try await client.call(
                    .post, "/v1/tokens", token: a.adminToken, json: #"{"operator_id": "\#(staffID)"}"#)
                let secret = try #require((token.json["secret"] as? String))
                #expect(
                    try await client.call(.get, "/v1/goods", token: secret).status == 200, "the new staff member works")
                let listed =
                    (try await client.call(
                        .get, "/v1/operators", token: a.adminToken
                    ).json["items"] as? [[String: Any]])
                    ?? []
                #expect(listed.contains { $0["id"] as? String == staffID })
                #expect(listed.allSatisfy { $0["tenant_id"] as? String == a.tenantID.uuidString.lowercased() })

                let platformRole = try await client.call(
                    .post, "/v1/operators", token: a.adminToken,
                    json: #"{"email": "boss@\#(a.slug).example", "role": "backend_manager"}"#)
                #expect(platformRole.status == 422)
                let elsewhere = try await client.call(
                    .post, "/v1/operators", token: a.adminToken,
                    json:
                        #"""
                        {"email": "spy@\#(a.slug).example", "role": "partner_staff",\#
                         "tenant_id": "\#(b.tenantID.uuidString.lowercased())"}
                        """#
                )
                #expect(elsewhere.status == 422)
                #expect(
                    try await client.call(
                        .post, "/v1/operators/\(staffID)/disable", token: b.adminToken, json: #"{"reason": "not mine"}"#
                    ).status
                        == 404)
                #expect(
                    try await client.call(
                        .post, "/v1/operators", token: secret,
                        json: #"{"email": "x@\#(a.slug).example", "role": "partner_staff"}"#
                    )
                    .status == 403, "staff do not invite")

                let disabled = try await client.call(
                    .post, "/v1/operators/\(staffID)/disable", token: a.adminToken,
                    json: #"{"reason": "left the shop"}"#)
                #expect(disabled["status"] == "disabled")
                #expect(
                    try await client.call(.get, "/v1/goods", token: secret).status == 401,
                    "a disabled member's token is refused at once")
            }
        }
    }
}
