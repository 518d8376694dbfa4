import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("The registry of customer data: the schema, the purge and the export agree with it")
struct CustomerDataRegistryTests {
    /// Columns with personal data wherever they appear.
    static let personalNames = [
        "email", "display_name", "shipping_name", "shipping_address", "content_text", "contact_email", "phone",
        "birth_date", "address",
    ]

    /// Columns the detection finds that hold no customer's data, and why.
    static let notCustomers: [String: String] = [
        "operators.email": "an operator (staff), not a customer",
        "operator_passwords.email": "an operator's sign-in",
        "shop_applications.contact_email": "a retail partner's contact",
        "shop_profiles.contact_email": "a retail partner's contact",
        "articles.author_id": "an expert (an operator)",
        "foods.author_id": "an expert or a manager (an operator)",
        "videos.author_id": "an expert or a manager (an operator)",
        "recipes.author_id": "an expert or a manager (an operator)",
        "plans.author_id": "an expert or a manager (an operator)",
        "shop_applications.address": "a retail partner's business address",
        "shop_profiles.address": "a retail partner's business address",
        "console_sign_in_failures.address": "the source address of an operator's sign-in attempt",
    ]

    /// The schema's columns that name a customer or hold personal data: `table.column`.
    static func detected(_ env: TestEnvironment) async throws -> Set<String> {
        let names = (["customer_id", "reporter_id", "author_id"] + personalNames).map { "'\($0)'" }
        let text =
            try await env.ownerScalar(
                """
                SELECT coalesce(string_agg(table_name || '.' || column_name, ' '), '') FROM (
                    SELECT c.table_name, c.column_name FROM information_schema.columns c
                    JOIN information_schema.tables t USING (table_schema, table_name)
                    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
                        AND c.column_name IN (\(names.joined(separator: ", ")))
                    UNION
                    SELECT conrelid::regclass::text, a.attname FROM pg_constraint k
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey)
                    WHERE k.contype = 'f' AND k.confrelid = 'customers'::regclass) found
                """, as: String.self) ?? ""
        return Set(text.split(separator: " ").map(String.init))
    }

    @Test(
        """
        every column that names a customer or holds personal data is in the registry (or said not to be a \
        customer's); every registered column exists; what the purge deletes with the account cascades, what it keeps \
        does not
        """
    )
    func schemaMatchesRegistry() async throws {
        try await TestEnvironment.with { env in
            let registered = Set(
                CustomerDataRegistry.holdings.flatMap { holding in
                    ([holding.column] + holding.personal).map { "\(holding.table).\($0)" }
                })
            let found = try await Self.detected(env)
            let missing = found.subtracting(registered).subtracting(Self.notCustomers.keys)
            #expect(missing.isEmpty, "customer data the registry does not name: \(missing.sorted())")
            let columns = Set(
                (try await env.ownerScalar(
                    """
                    SELECT string_agg(table_name || '.' || column_name, ' ') FROM information_schema.columns
                    WHERE table_schema = 'public'
                    """, as: String.self) ?? "").split(separator: " ").map(String.init))
            let stale = registered.subtracting(columns)
            #expect(stale.isEmpty, "registered but not in the schema: \(stale.sorted())")
            let cascading = Set(
                (try await env.ownerScalar(
                    """
                    SELECT string_agg(conrelid::regclass::text, ' ') FROM pg_constraint
                    WHERE contype = 'f' AND confrelid = 'customers'::regclass AND confdeltype = 'c'
                    """, as: String.self) ?? "").split(separator: " ").map(String.init))
            for holding in CustomerDataRegistry.holdings where holding.table != "customers" {
                let cascades = cascading.contains(holding.table)
                let key = cascades ? "cascades" : "does not cascade"
                #expect(
                    (holding.purge == .deletedWithAccount) == cascades,
                    "\(holding.table): \(holding.purge) but its foreign key \(key)")
            }
        }
    }

    @Test("the data export's sections are exactly those the registry names")
    func exportMatchesRegistry() {
        let sections = Set(
            CustomerDataExport.sections.map(\.key) + ["activity"] + CustomerDataExport.laterSections.map(\.key))
        let named = Set(
            CustomerDataRegistry.holdings.compactMap { holding -> String? in
                if case .section(let key) = holding.export { key } else { nil }
            })
        #expect(named.subtracting(sections).isEmpty, "sections named but not exported: \(named.subtracting(sections))")
        // The ledger section reads the wallet (keyed by the customer's id), which has no customer column.
        #expect(
            sections.subtracting(named) == ["fitpoints"],
            "sections exported but not named: \(sections.subtracting(named))")
    }

    @Test(
        """
        purging an author keeps their moderation case, decisions and statements (author and text erased): the \
        transparency export still has the statement; their reports of others' content go
        """
    )
    func statementsKept() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            let other = try await env.customer()
            let manager = env.fixture.tokens[.backendManager]!
            let auditor = env.fixture.tokens[.auditor]!
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let caseID = try await ModerationAPITests.held(
                    client, env, author, id: "gone-post", text: "i know where you live")
                let decided = try await ModerationAPITests.decide(
                    client, caseID, token: env.fixture.tokens[.moderator]!,
                    json: #"{"decision":"remove","ground":"respect","explanation":"A threat."}"#)
                #expect(decided.status == 201, "\(decided.text)")
                let reported = try await client.call(
                    .post, "/v1/moderation/reports", token: app,
                    json: ModerationAPITests.report(other, id: "other-post", reporter: author.id))
                #expect(reported.status == 200, "\(reported.text)")
                _ = try await env.database.run(
                    TransitionAccount(customerID: author.id, move: .delete, reason: "asked to leave"),
                    context: env.context(.backendManager))
                env.clock.advance(by: 31 * 86_400)
                let purge = try await client.call(
                    .post, "/v1/maintenance/purge", token: manager, json: #"{"dry_run":false}"#,
                    headers: .newIdempotencyKey)
                #expect(purge.status == 200, "\(purge.text)")
                let read = try await client.call(.get, "/v1/moderation/cases/\(caseID)", token: auditor)
                #expect(read.status == 200, "\(read.text)")
                let kept = read.json["case"] as? [String: Any]
                #expect(kept?["author_id"] == nil && kept?["content_text"] as? String == "erased", "\(read.text)")
                #expect((read.json["statements"] as? [Any])?.count == 2, "the screen's hold and the removal")
                let export = try await client.call(
                    .get, "/v1/moderation/statements?since=2000-01-01T00:00:00Z", token: auditor)
                let lines = export.text.split(separator: "\n").filter { $0.contains(caseID) }
                #expect(lines.count == 2 && lines.allSatisfy { !$0.contains("author_id") }, "\(export.text)")
                #expect(!export.text.contains(author.id.text), "the author's id appears nowhere")
            }
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM moderation_reports WHERE reporter_id = '\(author.id)'", as: Int64.self) == 0)
            let event =
                try await env.ownerScalar(
                    """
                    SELECT after::text FROM audit_events WHERE action = 'accounts.purge'
                        AND target_id = '\(author.id.text)'
                    """,
                    as: String.self) ?? ""
            #expect(event.contains("moderation_cases.author_id") && event.contains("moderation_reports"), "\(event)")
        }
    }
}
