import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Health profiles: the app's sync, reads for a purpose (each recorded), masking, and who may read")
struct HealthProfilesAPITests {
    static let profile = #"""
        {"height_cm":168,"weight_kg":72.5,"birth_year":1990,"sex":"female","weight_goal":"lose",
         "target_weight_kg":65,"target_date":"2099-01-01","daily_calorie_goal":1800,"activity_level":"moderate"}
        """#

    /// The contract's field names, all a sync's audit event may name.
    static let fieldNames = [
        "height_cm", "weight_kg", "birth_year", "sex", "weight_goal", "target_weight_kg", "target_date",
        "daily_calorie_goal", "activity_level",
    ]

    static func path(_ customer: Customer) -> String { "/v1/customers/\(customer.id.text)/health-profile" }

    static func accesses(_ env: TestEnvironment) async throws -> Int64 {
        try await env.ownerScalar("SELECT count(*) FROM health_access_events", as: Int64.self) ?? 0
    }

    static func sync(_ client: any TestClientProtocol, _ env: TestEnvironment, _ customer: Customer, _ body: String)
        async throws -> Reply
    {
        try await client.call(.put, path(customer), token: env.fixture.tokens[.appService]!, json: body)
    }

    @Test(
        """
        out-of-range values are refused by field (a 3 m customer, a birth year next year, a weight with two \
        decimals, a target against the goal, a day that is not a day) and nothing is stored or audited
        """
    )
    func refusedByField() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let nextYear = Calendar.utc.component(.year, from: env.clock.now()) + 1
            try await env.withApp { client in
                let cases: [(String, String)] = [
                    (#""height_cm":168"#, #""height_cm":300"#),
                    (#""birth_year":1990"#, #""birth_year":\#(nextYear)"#),
                    (#""weight_kg":72.5"#, #""weight_kg":72.55"#),
                    (#""target_weight_kg":65"#, #""target_weight_kg":80"#),
                    (#""target_date":"2099-01-01""#, #""target_date":"2099-02-30""#),
                    (#""daily_calorie_goal":1800"#, #""daily_calorie_goal":90"#),
                ]
                let fields = [
                    "height_cm", "birth_year", "weight_kg", "target_weight_kg", "target_date", "daily_calorie_goal",
                ]
                for ((from, to), field) in zip(cases, fields) {
                    let refused = try await Self.sync(
                        client, env, customer, Self.profile.replacingOccurrences(of: from, with: to))
                    #expect(refused.status == 422, "\(to): \(refused.text)")
                    let named = (refused.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                    #expect(named == [field], "\(to) names \(field) alone: \(refused.text)")
                }
                let both = try await Self.sync(
                    client, env, customer,
                    Self.profile.replacingOccurrences(of: #""height_cm":168"#, with: #""height_cm":49"#)
                        .replacingOccurrences(of: #""weight_kg":72.5"#, with: #""weight_kg":401"#))
                let named = (both.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                #expect(Set(named) == ["height_cm", "weight_kg"], "every field out of range is named: \(both.text)")
                let unreadable = try await Self.sync(
                    client, env, customer,
                    Self.profile.replacingOccurrences(of: #""height_cm":168"#, with: #""height_cm":300"#)
                        .replacingOccurrences(of: #""weight_kg":72.5"#, with: #""weight_kg":72.55"#))
                let together = (unreadable.json["errors"] as? [[String: Any]] ?? []).compactMap {
                    $0["field"] as? String
                }
                #expect(Set(together) == ["height_cm", "weight_kg"], "one answer names both: \(unreadable.text)")
                let unknownSex = try await Self.sync(
                    client, env, customer, Self.profile.replacingOccurrences(of: "female", with: "robot"))
                #expect(unknownSex.status == 400, "an enum value outside the contract is malformed")
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM health_profile_history", as: Int64.self) == 0)
            #expect(try await env.auditCount("health_profiles.sync") == 0, "a refusal changes nothing")
        }
    }

    @Test(
        """
        a sync keeps a version per change (none for an unchanged sync), audits the changed fields and a digest, \
        never a value; a manager reads with a purpose, each read one access event; the auditor gets ranges; \
        partners, experts and the app itself cannot read; no purpose or an unknown one is 422 and records nothing
        """
    )
    func syncAndRead() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let path = Self.path(customer)
            try await env.withApp { client in
                let first = try await Self.sync(client, env, customer, Self.profile)
                #expect(first.status == 200 && first["version"] == "1", "\(first.text)")
                // A value stands alone; ids and digests in the answer are hex and may hold the same digits.
                let value = { (digits: String) in
                    first.text.range(of: "(?<![0-9a-fA-F.])\(digits)(?![0-9a-fA-F.])", options: .regularExpression)
                        != nil
                }
                #expect(!value("72\\.5") && !value("168"), "a sync echoes no value: \(first.text)")
                let same = try await Self.sync(client, env, customer, Self.profile)
                #expect(same["version"] == "1" && (same.json["changed"] as? [String]) == [], "\(same.text)")
                let lighter = try await Self.sync(
                    client, env, customer, Self.profile.replacingOccurrences(of: "72.5", with: "71.9"))
                #expect(
                    lighter["version"] == "2" && (lighter.json["changed"] as? [String]) == ["weight_kg"],
                    "\(lighter.text)")
                #expect(try await env.auditCount("health_profiles.sync") == 2, "one event per change, none unchanged")
                let after =
                    try await env.ownerScalar(
                        """
                        SELECT json_agg(after ORDER BY id)::text FROM audit_events
                        WHERE action = 'health_profiles.sync'
                        """, as: String.self) ?? "[]"
                let events = try JSONSerialization.jsonObject(with: Data(after.utf8)) as? [[String: Any]] ?? []
                for event in events {
                    // Exactly these three keys: no value and no figure derived from one.
                    #expect(Set(event.keys) == ["version", "changed", "digest"], "\(event)")
                    let digest = event["digest"] as? String ?? ""
                    #expect(digest.count == 64 && digest.allSatisfy(\.isHexDigit), "a SHA-256 digest: \(digest)")
                    let fields = Set(Self.fieldNames)
                    #expect((event["changed"] as? [String] ?? []).allSatisfy(fields.contains), "field names only")
                }
                #expect(events.count == 2)

                let manager = env.fixture.tokens[.backendManager]!
                let before = try await Self.accesses(env)
                let noPurpose = try await client.call(.get, path, token: manager)
                #expect(noPurpose.status == 422 && noPurpose.text.contains("support_request"), "\(noPurpose.text)")
                let unknown = try await client.call(.get, "\(path)?purpose=curiosity", token: manager)
                #expect(unknown.status == 422)
                #expect(try await Self.accesses(env) == before, "a refused read records nothing")

                let read = try await client.call(.get, "\(path)?purpose=support_request", token: manager)
                #expect(read.status == 200, "\(read.text)")
                #expect(read.headers[.cacheControl] == "no-store")
                #expect(read["height_cm"] == "168" && read["weight_kg"] == "71.9" && read["sex"] == "female")
                #expect((read.json["weights"] as? [[String: Any]])?.count == 2, "the history: one weight per version")
                #expect(try await Self.accesses(env) == before + 1, "one read, one access event")
                _ = try await client.call(.get, "\(path)?purpose=support_request", token: manager)
                #expect(try await Self.accesses(env) == before + 2, "a second read is a second event")

                let audited = try await client.call(.get, "\(path)?purpose=audit", token: env.fixture.tokens[.auditor]!)
                #expect(audited.status == 200, "\(audited.text)")
                for hidden in ["height_cm", "weight_kg", "birth_year", "age", "sex", "weights", "review"] {
                    #expect(audited.json[hidden] == nil, "the auditor does not see \(hidden)")
                }
                let ranges = audited.json["ranges"] as? [String: Any]
                #expect(ranges?["height_cm"] as? String == "160–169" && ranges?["weight_kg"] as? String == "70–79")
                #expect(try await Self.accesses(env) == before + 3, "the auditor's read is recorded too")

                for token in [
                    env.fixture.partners[0].adminToken, env.fixture.partners[0].staffToken,
                    env.fixture.tokens[.expert]!, env.fixture.tokens[.appService]!,
                ] {
                    let refused = try await client.call(.get, "\(path)?purpose=support_request", token: token)
                    #expect(refused.status == 403)
                }
                let stranger = try await client.call(
                    .get, "/v1/customers/\(UUID().uuidString)/health-profile?purpose=support_request", token: manager)
                #expect(stranger.status == 404)
                #expect(try await Self.accesses(env) == before + 3, "refusals and unknown customers record nothing")

                let withoutProfile = try await env.customer()
                let none = try await client.call(
                    .get, "\(Self.path(withoutProfile))?purpose=support_request", token: manager)
                #expect(none.status == 404, "no profile yet")
                #expect(
                    try await Self.accesses(env) == before + 4, "looking for a profile that is not there is recorded")
            }
        }
    }

    @Test(
        """
        the database itself: with the service's filters removed, a partner's transaction cannot read or write \
        health data, and no role can read the profiles' tables as a list (only health_profile_read, one customer)
        """
    )
    func databaseRefuses() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await env.withApp { client in _ = try await Self.sync(client, env, customer, Self.profile) }
            let partner = env.fixture.partners[0].admin
            let (manager, expert) = (env.fixture.principals[.backendManager]!, env.fixture.principals[.expert]!)
            let append = """
                SELECT health_access_append('\(customer.id.text)', NULL, 'support_request', 'api', 'test', NULL, NULL)
                """
            let events: @Sendable () async throws -> Int64? = {
                try await env.ownerScalar("SELECT count(*) FROM health_access_events", as: Int64.self)
            }
            for refused in [partner, expert] {
                #expect(await env.asService(refused, append)?.status == 403, "\(refused.role) is refused")
            }
            #expect(try await events() == 0, "the refused reads appended nothing")
            let sync = """
                SELECT * FROM health_profile_sync('\(customer.id.text)', now(), 150::smallint, 600, 1980::smallint, \
                'male', 'keep', NULL, NULL, 2000, 'light')
                """
            for refused in [partner, manager] {
                #expect(await env.asService(refused, sync)?.status == 403, "only the app's backend writes")
            }
            for table in ["health_profiles", "health_profile_history", "health_access_reads"] {
                #expect(
                    await env.asService(manager, "SELECT * FROM \(table)")?.status == 403,
                    "no list read of \(table), even for a manager")
                #expect(await env.asService(manager, "DELETE FROM \(table)")?.status == 403)
            }
            #expect(await env.asService(manager, "UPDATE health_access_events SET purpose = 'x'")?.status == 403)
            // Appending and reading in one transaction, which a rollback could take back after the read: refused.
            let together =
                "SELECT * FROM health_profile_read((\(append.trimmingCharacters(in: .whitespacesAndNewlines))), 10)"
            #expect(await env.asService(manager, together)?.status == 403, "an event of the reading transaction")
            #expect(try await events() == 0, "and that transaction's event rolled back with it")
            #expect(await env.asService(manager, append) == nil, "the first step, committed on its own")
            let id = try #require(try await env.ownerScalar("SELECT max(id) FROM health_access_events", as: Int64.self))
            let read = "SELECT * FROM health_profile_read(\(id), 10)"
            #expect(await env.asService(partner, read)?.status == 403, "a partner cannot read with it")
            #expect(await env.asService(manager, read) == nil, "the second step: the one way to read")
            #expect(await env.asService(manager, read) != nil, "one read per event")
            #expect(try await events() == 1)
            let sees = "SELECT 1 / count(*)::int FROM health_access_events"  // 1/0 fails when none is visible
            #expect(await env.asService(manager, sees) == nil, "a manager sees the access log")
            #expect(await env.asService(expert, sees) != nil, "an expert sees none of it")
        }
    }

    @Test(
        """
        who read this customer's data: managers, auditors and the app list the events (purpose, via), newest \
        first and paged; partners cannot
        """
    )
    func accessList() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let other = try await env.customer()
            let path = Self.path(customer)
            try await env.withApp { client in
                _ = try await Self.sync(client, env, customer, Self.profile)
                _ = try await Self.sync(client, env, other, Self.profile)
                let manager = env.fixture.tokens[.backendManager]!
                for purpose in ["support_request", "appeal_review", "safety_review"] {
                    _ = try await client.call(.get, "\(path)?purpose=\(purpose)", token: manager)
                }
                _ = try await client.call(.get, "\(Self.path(other))?purpose=audit", token: manager)
                for token in [manager, env.fixture.tokens[.auditor]!, env.fixture.tokens[.appService]!] {
                    let page = try await client.call(.get, "\(path)/accesses?limit=2", token: token)
                    let items = page.json["items"] as? [[String: Any]] ?? []
                    #expect(
                        items.map { $0["purpose"] as? String } == ["safety_review", "appeal_review"], "\(page.text)")
                    #expect(
                        items.allSatisfy {
                            $0["via"] as? String == "api" && $0["actor_role"] as? String == "backend_manager"
                        })
                    let cursor = try #require(page["next_cursor"])
                    let rest = try await client.call(.get, "\(path)/accesses?limit=2&cursor=\(cursor)", token: token)
                    let last = rest.json["items"] as? [[String: Any]] ?? []
                    #expect(
                        last.map { $0["purpose"] as? String } == ["support_request"], "nothing of the other customer")
                }
                let refused = try await client.call(
                    .get, "\(path)/accesses", token: env.fixture.partners[0].adminToken)
                #expect(refused.status == 403)
            }
        }
    }
}
