import BackofficeAPI
import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Defence in depth in PostgreSQL, retention, and the rules nobody may break")
struct DatabaseSecurityTests {
    @Test(
        """
        the service role can neither insert an audit event, rewind a chain head, nor append for a tenant it does \
        not act for
        """
    )
    func auditIsNotWritableByTheServiceRole() async throws {
        try await TestEnvironment.with { env in
            _ = try await env.customer()
            let before = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
            let platform = env.fixture.principals[.platformAdmin]!
            let insert = await env.asService(
                platform,
                """
                INSERT INTO audit_events (tenant_id, chain, seq, occurred_at, actor_role, action, target_type,
                    target_id, request_id,
                    policy_digest, canonical, prev_hash, hash)
                VALUES ('00000000-0000-0000-0000-000000000000', 'platform:00', 999, now(), 'x', 'x', 'x', 'x', 'x',
                    'x', '', '', '')
                """)
            #expect(insert?.status == 403)
            let rewind = await env.asService(platform, "UPDATE audit_chain_heads SET seq = 0")
            #expect(rewind?.status == 403)
            let heads = await env.asService(
                platform,
                "INSERT INTO audit_chain_heads (tenant_id, chain, seq, hash) VALUES (gen_random_uuid(), 'x', 1, '')")
            #expect(heads?.status == 403)
            let partner = env.fixture.partners[0].admin
            let otherTenant = env.fixture.partners[1].tenantID.uuidString.lowercased()
            let foreign = await env.asService(
                partner,
                """
                SELECT audit_append('\(otherTenant)', NULL, 'partner_admin', 'x', 'x', 'x', 'forged', NULL, NULL, \
                NULL, NULL, 'x', NULL)
                """
            )
            #expect(foreign?.status == 403, "a partner's transaction cannot append to another tenant's chain")
            #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == before)
            let definer = try await env.ownerScalar(
                "SELECT prosecdef AND proconfig::text LIKE '%search_path%' FROM pg_proc WHERE proname = 'audit_append'",
                as: Bool.self)
            #expect(definer == true, "audit_append is SECURITY DEFINER with a pinned search_path")
        }
    }

    @Test(
        """
        a read session (GET) acts for its principal and plans as it asks only: the next user of its connection \
        inherits neither, and no change runs in it
        """
    )
    func readSessionsDoNotLeak() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            // One connection, so every step below reuses the connection the previous one left.
            try await Database.with(url: env.appURL, logger: testLogger, maximumConnections: 1) { database in
                func customersSeen(_ connection: PostgresConnection) async throws -> Int {
                    try await firstInt("SELECT count(*) FROM customers", on: connection)
                }
                let manager = TokenSecret(value: env.fixture.tokens[.backendManager]!).hash
                let partner = TokenSecret(value: env.fixture.partners[0].adminToken).hash
                let seenByManager = try await database.readSession(tokenHash: manager) { principal, session in
                    #expect(principal?.role == "backend_manager")
                    return try await customersSeen(session.connection)
                }
                #expect(seenByManager >= 1)
                let seenByPartner = try await database.readSession(tokenHash: partner) { _, session in
                    try await customersSeen(session.connection)
                }
                #expect(seenByPartner == 0, "a partner's read session after a manager's sees no platform customer")
                let refused = try await database.readSession(tokenHash: TokenSecret.generate().hash) {
                    principal, session in
                    (principal == nil, try await customersSeen(session.connection))
                }
                #expect(
                    refused == (true, 0),
                    "a refused token's session acts for nobody, whoever used the connection before")
                func planMode(_ connection: PostgresConnection) async throws -> String {
                    for try await mode in try await connection.query("SHOW plan_cache_mode", logger: testLogger).decode(
                        String.self)
                    { return mode }
                    return "none"
                }
                let generic = try await database.readSession(tokenHash: manager, plans: .generic) { _, session in
                    try await planMode(session.connection)
                }
                #expect(generic == "force_generic_plan")
                let partnerPrincipal = env.fixture.partners[0].admin
                let inTransaction = try await database.transaction(for: partnerPrincipal) {
                    (try await customersSeen($0), try await planMode($0))
                }
                #expect(inTransaction.0 == 0, "a transaction acts for its own principal, not the session's last one")
                #expect(
                    inTransaction.1 == "auto",
                    "a transaction plans as PostgreSQL chooses, whatever plans the session before it used")
                _ = try await database.readSession(tokenHash: manager, plans: .generic) { _, _ in 0 }
                let afterGeneric = try await database.readSession(tokenHash: partner) { _, session in
                    try await planMode(session.connection)
                }
                #expect(
                    afterGeneric == "auto",
                    "a read session plans as it asks, not as the connection's previous session did")
                try await database.readSession(tokenHash: manager) { principal, session in
                    let context = OperationContext(
                        principal: try #require(principal), requestID: "read-only", sourceIP: nil,
                        policies: env.policies, transaction: session)
                    await #expect(throws: DomainError.self, "a change cannot run in a read session") {
                        _ = try await database.run(
                            TransitionAccount(customerID: customer.id, move: .lock, reason: "from a GET"),
                            context: context)
                    }
                }
            }
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(customer.id)'", as: String.self)
                    == "active")
        }
    }

    @Test("row-level security is FORCEd on every table the service can read")
    func rowLevelSecurityIsForced() async throws {
        try await TestEnvironment.with { env in
            let unforced = try await env.ownerScalar(
                """
                SELECT coalesce(string_agg(c.relname, ', '), '') FROM pg_class c JOIN pg_namespace n ON n.oid =
                    c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind = 'r' AND has_table_privilege('backoffice_app', c.oid,
                    'SELECT')
                  AND NOT (c.relrowsecurity AND c.relforcerowsecurity)
                """, as: String.self)
            #expect(unforced == "")
            let tables = try await env.ownerScalar(
                """
                SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = \
                'public' AND c.relkind = 'r' AND c.relforcerowsecurity
                """,
                as: Int.self)
            #expect((tables ?? 0) >= 10)
        }
    }

    @Test(
        """
        every key of a tenant-owned table (its primary key and each unique index) leads with tenant_id, so a \
        tenant's rows sit together and no key can reach across tenants
        """
    )
    func tenantKeysLeadWithTenant() async throws {
        // The keys that must be unique across tenants, each for its reason; any other key of a table with a
        // tenant_id leads with it (a new domain's migration included).
        let global: [String: String] = [
            "operators_id": "an operator is found by id when its token or session is authenticated, before its tenant",
            "operator_passwords_email": "one operator per email: sign-in finds it by email, before its tenant",
            "tokens_id": "a token is revoked and listed by id; ids are random across tenants",
            "tokens_secret_hash_key": "authentication finds a token by its secret's hash, before its tenant",
            "console_sessions_pkey": "a session is found by id, before its tenant",
            "console_sessions_secret_hash_key": "a session cookie is found by its secret's hash, before its tenant",
            "operator_invitations_pkey": "an invitation is found by id from its link, before sign-in",
            "operator_invitations_secret_hash_key": "an invitation link is found by its secret's hash, before sign-in",
            "shop_applications_pkey": "an application is the platform's; its tenant exists only once it is approved",
            "shop_applications_claim": "a claim code is found by its hash, before any tenant is known",
            "shop_profiles_tax_id_key": "one shop per tax id across the platform",
            "shop_profiles_application_id_key": "one shop per approved application",
            "payments_by_provider_id": "a provider's webhook finds its payment by the provider's id, before the tenant",
            "outbox_pkey": "the delivery service claims messages across tenants",
            "outbox_message_id_key": "a Message-ID is unique in the world",
            "staged_goods_imports_pkey": "a staged file is found by the random id its page links to",
            "audit_daily_actions_pkey": "a chain belongs to one tenant: (chain, day, family) is the tenant's key",
            "audit_verifications_pkey": "the platform's record of verification runs, by identity",
            "oauth_clients_id": "the token endpoint finds a client by its client_id, before any tenant is known",
            "oauth_clients_secret_hash_key": "a client's secret is checked by its hash, before any tenant is known",
        ]
        try await TestEnvironment.with { env in
            let keys = try await env.ownerScalar(
                """
                SELECT coalesce(string_agg(i.indexrelid::regclass::text, ', ' ORDER BY 1), '')
                FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind = 'r' AND (i.indisprimary OR i.indisunique)
                  AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id'
                      AND NOT a.attisdropped)
                  AND (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = i.indkey[0])
                      IS DISTINCT FROM 'tenant_id'
                """, as: String.self)
            let found = Set((keys ?? "").split(separator: ", ").map(String.init))
            let unlisted = found.subtracting(global.keys).sorted()
            #expect(unlisted.isEmpty, "keys of tenant-owned tables that do not lead with tenant_id: \(unlisted)")
            #expect(
                Set(global.keys).subtracting(found).isEmpty, "listed but gone: \(Set(global.keys).subtracting(found))")
            let tenantTables = try await env.ownerScalar(
                """
                SELECT count(DISTINCT a.attrelid) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attname = 'tenant_id'
                """, as: Int.self)
            #expect((tenantTables ?? 0) >= 8, "tenant-owned tables: \(tenantTables ?? 0)")
        }
    }

    @Test("every audit event records the token the change was made with")
    func auditRecordsTheToken() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.principals[.backendManager]!
            _ = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "Chargeback"),
                context: env.context(.backendManager))
            let recorded = try await env.ownerScalar(
                """
                SELECT token_id FROM audit_events WHERE action = 'accounts.lock' AND target_id = \
                '\(customer.id.uuidString.lowercased())'
                """,
                as: UUID.self)
            #expect(recorded == manager.tokenID)
            try await env.withApp { client in
                let page = try await client.call(
                    .get, "/v1/audit/events?action=accounts.lock&target_id=\(customer.id.uuidString.lowercased())",
                    token: env.fixture.tokens[.auditor]!)
                let event = try page.decode(Components.Schemas.AuditEventPage.self).items.first
                #expect(event?.tokenId == manager.tokenID?.uuidString.lowercased())
            }
            let verified = try await AuditLog(database: env.database).verify(
                checkpoint: [], context: env.context(.auditor))
            #expect(verified.failure == nil, "token_id is part of the hashed bytes and still verifies")
            let canonical = try await env.ownerScalar(
                """
                SELECT convert_from(canonical, 'UTF8') FROM audit_events WHERE action = 'accounts.lock' AND \
                target_id = '\(customer.id.uuidString.lowercased())'
                """,
                as: String.self)
            #expect(canonical?.contains(manager.tokenID!.uuidString.lowercased()) == true)
        }
    }

    @Test("maintenance purge removes expired idempotency records and old login attempts (dry run first), audited")
    func retentionPurge() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let id = customer.id.uuidString.lowercased()
                for key in ["old-key", "fresh-key"] {
                    let reply = try await client.call(
                        .post, "/v1/customers/\(id)/login-attempts", token: app, json: #"{"succeeded":true}"#,
                        headers: ["Idempotency-Key": key])
                    #expect(reply.status == 200)
                }
                try await env.asOwner(
                    "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old-key'")
                try await env.asOwner(
                    """
                    UPDATE login_attempts SET occurred_at = now() - interval '91 days' WHERE id = (SELECT min(id) \
                    FROM login_attempts)
                    """
                )
                let dry = try await client.call(
                    .post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":true}"#)
                #expect(dry.status == 200)
                #expect(dry.json["idempotency_keys"] as? Int == 1)
                #expect(dry.json["login_attempts"] as? Int == 1)
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM idempotency_keys", as: Int.self) == 2,
                    "a dry run deletes nothing")
                let real = try await client.call(
                    .post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":false}"#)
                #expect(real.status == 200)
                #expect(real.json["idempotency_keys"] as? Int == 1)
            }
            #expect(
                try await env.ownerScalar("SELECT string_agg(key, ',') FROM idempotency_keys", as: String.self)
                    == "fresh-key")
            #expect(try await env.ownerScalar("SELECT count(*) FROM login_attempts", as: Int.self) == 1)
            let audited = try await env.ownerScalar(
                """
                SELECT string_agg(target_id, ',' ORDER BY target_id) FROM audit_events WHERE action = \
                'accounts.purge' AND target_type = 'retention'
                """,
                as: String.self)
            #expect(audited == "idempotency_keys,login_attempts")
        }
    }

    @Test("failed logins on a locked account are kept as evidence but neither grow the count nor add audit events")
    func noAuditFloodOnALockedAccount() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let app = env.context(.appService)
            for _ in 0..<3 {
                _ = try await env.database.run(
                    ReportLoginAttempt(customerID: customer.id, succeeded: false), context: app)
            }
            let id = customer.id.uuidString.lowercased()
            let events = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE target_id = '\(id)'", as: Int.self)
            var after = customer
            for _ in 0..<20 {
                after = try await env.database.run(
                    ReportLoginAttempt(customerID: customer.id, succeeded: false), context: app)
            }
            #expect(after.status == .locked)
            #expect(after.failedLogins == 3)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE target_id = '\(id)'", as: Int.self)
                    == events)
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM login_attempts WHERE customer_id = '\(id)'", as: Int.self) == 23)
        }
    }

    @Test("nobody locks a tenant out: an operator cannot disable itself, nor the tenant's last active admin")
    func tenantLockout() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let adminID = partner.admin.operatorID!.uuidString.lowercased()
            try await env.withApp { client in
                let itself = try await client.call(
                    .post, "/v1/operators/\(adminID)/disable", token: partner.adminToken, json: #"{"reason":"oops"}"#)
                #expect(itself.status == 409)
                #expect(itself["code"] == "cannot_disable_self")
                let platformAdmin = env.fixture.tokens[.platformAdmin]!
                let last = try await client.call(
                    .post, "/v1/operators/\(adminID)/disable", token: platformAdmin, json: #"{"reason":"offboarding"}"#)
                #expect(last.status == 409)
                #expect(last["code"] == "last_admin")
                let second = try await client.call(
                    .post, "/v1/operators", token: partner.adminToken,
                    json: #"{"email":"second@\#(partner.slug).example","role":"partner_admin"}"#)
                #expect(second.status == 201)
                let now = try await client.call(
                    .post, "/v1/operators/\(adminID)/disable", token: platformAdmin, json: #"{"reason":"offboarding"}"#)
                #expect(now.status == 200, "with another admin left, it may go")
            }
            let active = try await env.ownerScalar(
                """
                SELECT count(*) FROM operators WHERE tenant_id = '\(partner.tenantID.uuidString.lowercased())' \
                AND role = 'partner_admin' AND status = 'active'
                """,
                as: Int.self)
            #expect(active == 1)
        }
    }

    @Test("a value the code does not know, read from the database, is an error, never a silent default")
    func unknownStoredValues() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.asOwner("ALTER TABLE customers DROP CONSTRAINT customers_status_check")
            try await env.asOwner("UPDATE customers SET status = 'suspended' WHERE id = '\(customer.id)'")
            await #expect(throws: UnknownValue.self) {
                _ = try await env.database.read(
                    GetCustomerAccount(id: customer.id), context: env.context(.backendManager))
            }
            #expect(throws: UnknownValue.self) { try Role(known: "janitor") }
            #expect(try Role(known: "auditor") == .auditor)
        }
    }

    @Test("a token create answers Cache-Control: no-store")
    func secretResponsesAreNotCached() async throws {
        try await TestEnvironment.with { env in
            let operatorID = env.fixture.principals[.auditor]!.operatorID!.uuidString.lowercased()
            try await env.withApp { client in
                let reply = try await client.call(
                    .post, "/v1/tokens", token: env.fixture.tokens[.platformAdmin]!,
                    json: #"{"operator_id":"\#(operatorID)"}"#)
                #expect(reply.status == 201)
                #expect(reply.headers[.cacheControl] == "no-store")
            }
        }
    }
}

/// The integer the first row of `sql` holds.
func firstInt(_ sql: String, on connection: PostgresConnection) async throws -> Int {
    for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger).decode(
        Int.self)
    { return value }
    return 0
}

@Suite("Database errors at the edge")
struct DatabaseErrorTests {
    @Test("a deadlock or serialization failure is 503 transaction_conflict (retry), never 500")
    func contention() async throws {
        try await TestEnvironment.with { env in
            let principal = env.fixture.principals[.platformAdmin]!
            for state in ["deadlock_detected", "serialization_failure"] {
                let problem = await env.asService(
                    principal, "DO $$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = '\(state)'; END $$")
                #expect(problem?.status == 503, "\(state)")
                #expect(problem?.code == "transaction_conflict", "\(state)")
            }
        }
    }
}
