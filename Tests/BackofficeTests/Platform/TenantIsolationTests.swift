import BackofficeAPI
import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Tenant isolation (row-level security)")
struct TenantIsolationTests {
    /// Runs `sql` as the service's role with tenant `tenant`'s settings and returns the first column of each row.
    func asTenant(_ env: TestEnvironment, _ tenant: UUID, role: String, _ sql: String) async throws -> [String] {
        try await env.database.transaction(
            for: Principal(operatorID: UUID(), role: Role(rawValue: role)!, tenantID: tenant, tokenID: nil)
        ) {
            connection in
            var values: [String] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) {
                var cells = row.makeIterator()
                values.append(try cells.next()?.decode(String?.self) ?? "")
            }
            return values
        }
    }

    @Test("with tenant A's setting, queries without a tenant filter neither read nor change tenant B's rows")
    func rowLevelSecurity() async throws {
        try await TestEnvironment.with { env in
            let a = env.fixture.partners[0]
            let b = env.fixture.partners[1]
            // Reads with no WHERE clause at all.
            let operators = try await asTenant(
                env, a.tenantID, role: "partner_admin", "SELECT tenant_id::text FROM operators")
            #expect(!operators.isEmpty)
            #expect(Set(operators) == [a.tenantID.uuidString.lowercased()])
            let tokens = try await asTenant(
                env, a.tenantID, role: "partner_admin", "SELECT tenant_id::text FROM tokens")
            #expect(Set(tokens) == [a.tenantID.uuidString.lowercased()])
            let tenants = try await asTenant(env, a.tenantID, role: "partner_admin", "SELECT slug FROM tenants")
            #expect(tenants == [a.slug])
            let events = try await asTenant(
                env, a.tenantID, role: "partner_admin", "SELECT DISTINCT tenant_id::text FROM audit_events")
            #expect(events == [a.tenantID.uuidString.lowercased()])
            _ = try await env.customer()
            let customers = try await asTenant(env, a.tenantID, role: "partner_admin", "SELECT id::text FROM customers")
            #expect(customers.isEmpty, "customers belong to the platform")

            // Writes with no WHERE clause touch only tenant A's rows.
            let changed = try await asTenant(
                env, a.tenantID, role: "partner_admin",
                """
                WITH u AS (UPDATE operators SET email = email || '.x' RETURNING tenant_id) SELECT tenant_id::text \
                FROM u
                """
            )
            #expect(Set(changed) == [a.tenantID.uuidString.lowercased()])
            let bEmails = try await env.ownerScalar(
                "SELECT count(*) FROM operators WHERE tenant_id = '\(b.tenantID.uuidString)' AND email LIKE '%.x'",
                as: Int.self)
            #expect(bEmails == 0)

            // Inserting a row for tenant B is refused by the policy's WITH CHECK.
            await #expect(throws: DomainError.refused) {
                _ = try await asTenant(
                    env, a.tenantID, role: "partner_admin",
                    """
                    INSERT INTO operators (tenant_id, id, email, role, kind) VALUES ('\(b.tenantID.uuidString)', \
                    gen_random_uuid(), 'x@y.z', 'partner_staff', 'person') RETURNING email
                    """
                )
            }
            // A session with no tenant setting sees nothing.
            let none = try await env.database.client.withConnection { connection in
                var count = -1
                for try await value in try await connection.query("SELECT count(*) FROM operators", logger: testLogger)
                    .decode(Int.self)
                {
                    count = value
                }
                return count
            }
            #expect(none == 0)
        }
    }

    @Test("the service's role owns no table, so row-level security applies to it")
    func serviceRoleOwnsNothing() async throws {
        try await TestEnvironment.with { env in
            let owned = try await env.ownerScalar(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner = 'backoffice_app'",
                as: Int.self)
            #expect(owned == 0)
            let unprotected = try await env.ownerScalar(
                """
                SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind = 'r' AND NOT c.relrowsecurity AND c.relname <>
                    'schema_migrations'
                """, as: Int.self)
            #expect(unprotected == 0, "every table has row-level security enabled")
        }
    }

    @Test("a partner's HTTP requests see only its own tenant")
    func partnerSeesOwnTenant() async throws {
        try await TestEnvironment.with { env in
            let a = env.fixture.partners[0]
            let b = env.fixture.partners[1]
            try await env.withApp { client in
                let own = try await client.call(.get, "/v1/tenants/\(a.tenantID.uuidString)", token: a.adminToken)
                #expect(own.status == 200)
                let other = try await client.call(.get, "/v1/tenants/\(b.tenantID.uuidString)", token: a.adminToken)
                #expect(other.status == 404)
                let operators = try await client.call(.get, "/v1/operators", token: a.adminToken)
                let tenants = Set(try operators.decode(Components.Schemas.OperatorPage.self).items.map(\.tenantId))
                #expect(tenants == [a.tenantID.uuidString.lowercased()])
                let audit = try await client.call(.get, "/v1/audit/events?limit=500", token: a.adminToken)
                let chains = Set(try audit.decode(Components.Schemas.AuditEventPage.self).items.map(\.tenantId))
                #expect(chains == [a.tenantID.uuidString.lowercased()])
            }
        }
    }
}
