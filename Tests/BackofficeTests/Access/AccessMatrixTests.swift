import Backoffice
import Foundation
import HTTPTypes
import Testing

/// Derives the full role × action matrix from policies/access.yaml and checks every endpoint of
/// the API against it: a role the file grants the action to is never refused with 403 (nor 401);
/// every other role gets 403 problem+json `forbidden`.
@Suite("Access matrix from policies/access.yaml")
struct AccessMatrixTests {
    struct Endpoint: Sendable {
        let action: Action
        let method: HTTPRequest.Method
        let path: String
        let body: String?
    }

    @Test("every endpoint allows exactly what access.yaml grants")
    func matrix() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let context = Database.systemContext("matrix", policies: env.policies)
            let customer = try await env.customer()
            let locked = try await env.customer()
            _ = try await env.database.run(LockAccount(customerID: locked.id, reason: "for appeals"), context: env.context(.backendManager))
            let appeal = try await env.database.run(FileAppeal(customerID: locked.id, message: "please"), context: env.context(.appService))
            let staff = try await env.database.runAsSystem(
                CreateOperator(email: "matrix@\(partner.slug).example", role: .partnerStaff, tenantID: partner.tenantID), context: context)
            let (staffToken, _) = try await env.database.runAsSystem(
                CreateToken(operatorID: staff.id, name: "m", expiresInHours: 1), context: context)
            let c = customer.id.uuidString.lowercased()
            let endpoints: [Endpoint] = [
                .init(
                    action: .tenantsCreate, method: .post, path: "/v1/tenants",
                    body: #"{"slug":"matrix-\#(UUID().uuidString.prefix(6).lowercased())","name":"M"}"#),
                .init(action: .tenantsList, method: .get, path: "/v1/tenants", body: nil),
                .init(action: .tenantsRead, method: .get, path: "/v1/tenants/\(partner.tenantID)", body: nil),
                .init(
                    action: .operatorsCreate, method: .post, path: "/v1/operators",
                    body: #"{"email":"new-\#(UUID().uuidString.prefix(6))@x.example","role":"partner_staff","tenant_id":"\#(partner.tenantID)"}"#),
                .init(action: .operatorsList, method: .get, path: "/v1/operators", body: nil),
                .init(action: .tokensCreate, method: .post, path: "/v1/tokens", body: #"{"operator_id":"\#(staff.id)"}"#),
                .init(action: .tokensList, method: .get, path: "/v1/tokens", body: nil),
                .init(action: .tokensRevoke, method: .delete, path: "/v1/tokens/\(staffToken.id)", body: nil),
                .init(action: .operatorsDisable, method: .post, path: "/v1/operators/\(staff.id)/disable", body: #"{"reason":"matrix"}"#),
                .init(
                    action: .accountsSync, method: .post, path: "/v1/customers",
                    body: #"{"id":"\#(UUID())","email":"m@x.example","display_name":"M"}"#),
                .init(action: .accountsList, method: .get, path: "/v1/customers", body: nil),
                .init(action: .accountsRead, method: .get, path: "/v1/customers/\(c)", body: nil),
                .init(action: .accountsHistory, method: .get, path: "/v1/customers/\(c)/history", body: nil),
                .init(action: .accountsLock, method: .post, path: "/v1/customers/\(c)/lock", body: #"{"reason":"m"}"#),
                .init(action: .accountsUnlock, method: .post, path: "/v1/customers/\(c)/unlock", body: #"{"reason":"m"}"#),
                .init(action: .accountsDelete, method: .delete, path: "/v1/customers/\(c)", body: #"{"reason":"m"}"#),
                .init(action: .accountsRestore, method: .post, path: "/v1/customers/\(c)/restore", body: #"{"reason":"m"}"#),
                .init(action: .accountsReportLogin, method: .post, path: "/v1/customers/\(c)/login-attempts", body: #"{"succeeded":true}"#),
                .init(action: .accountsPasswordReset, method: .post, path: "/v1/customers/\(c)/password-resets", body: "{}"),
                .init(action: .accountsPurge, method: .post, path: "/v1/maintenance/purge", body: #"{"dry_run":true}"#),
                .init(action: .appealsFile, method: .post, path: "/v1/customers/\(locked.id)/appeals", body: #"{"message":"m"}"#),
                .init(action: .appealsList, method: .get, path: "/v1/appeals", body: nil),
                .init(action: .appealsResolve, method: .post, path: "/v1/appeals/\(appeal.id)/resolve", body: #"{"decision":"uphold","reason":"m"}"#),
                .init(action: .auditRead, method: .get, path: "/v1/audit/events", body: nil),
                .init(action: .auditRead, method: .get, path: "/v1/audit/heads", body: nil),
                .init(action: .auditExport, method: .get, path: "/v1/audit/export", body: nil),
                .init(action: .auditVerify, method: .post, path: "/v1/audit/verify", body: "{}"),
            ]
            #expect(Set(endpoints.map(\.action)) == Set(Action.allCases), "every action of the catalogue has an endpoint under test")
            let tokens: [(Role, String)] = [
                (.platformAdmin, env.fixture.tokens[.platformAdmin]!), (.backendManager, env.fixture.tokens[.backendManager]!),
                (.auditor, env.fixture.tokens[.auditor]!), (.appService, env.fixture.tokens[.appService]!),
                (.partnerAdmin, partner.adminToken), (.partnerStaff, partner.staffToken),
            ]
            try await env.withApp { client in
                for endpoint in endpoints {
                    for (role, token) in tokens {
                        let allowed = env.policies.access.allows(role.rawValue, endpoint.action)
                        let reply = try await client.call(endpoint.method, endpoint.path, token: token, json: endpoint.body)
                        if allowed {
                            #expect(
                                reply.status != 403 && reply.status != 401,
                                "\(role.rawValue) may \(endpoint.action.rawValue): \(endpoint.method) \(endpoint.path) → \(reply.status) \(reply.text)"
                            )
                        } else {
                            #expect(
                                reply.status == 403,
                                "\(role.rawValue) may not \(endpoint.action.rawValue): \(endpoint.method) \(endpoint.path) → \(reply.status)")
                            #expect(reply["code"] == "forbidden")
                            #expect(reply.headers[.contentType] == "application/problem+json")
                        }
                    }
                }
            }
        }
    }
}
