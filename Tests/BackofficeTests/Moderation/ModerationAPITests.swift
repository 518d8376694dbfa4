import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Moderation: the screen's cases, folded reports, the queue, decisions, statements, appeals, repeat offenders")
struct ModerationAPITests {
    static func content(_ author: Customer, id: String = UUID().uuidString, text: String) -> String {
        #"{"content_kind":"post","content_id":"\#(id)","text":"\#(text)","author_id":"\#(author.id.text)"}"#
    }

    static func report(_ author: Customer, id: String, reporter: UUID, reason: String = "harassment") -> String {
        #"""
        {"content_kind":"comment","content_id":"\#(id)","text":"you are awful","author_id":"\#(author.id.text)",
         "reporter_id":"\#(reporter.uuidString)","reason":"\#(reason)"}
        """#
    }

    /// Screens `text` of `author` as the app (a post), held by the screen: its case's id.
    static func held(
        _ client: some TestClientProtocol, _ env: TestEnvironment, _ author: Customer, id: String = UUID().uuidString,
        text: String
    ) async throws -> String {
        let held = try await client.call(
            .post, "/v1/moderation/screen", token: env.fixture.tokens[.appService]!,
            json: content(author, id: id, text: text))
        return try #require(held["case_id"], "\(held.status) \(held.text)")
    }

    /// Decides `caseID` as `token`, naming the version of the case read just before (as a moderator
    /// reads the case, then decides on what it says).
    static func decide(
        _ client: some TestClientProtocol, _ caseID: String, token: String, json: String
    ) async throws -> Reply {
        let read = try await client.call(.get, "/v1/moderation/cases/\(caseID)", token: token)
        return try await client.call(
            .post, "/v1/moderation/cases/\(caseID)/decision", token: token, json: json,
            headers: ["If-Match": read.headers[.eTag] ?? "\"0\""])
    }

    /// Another moderator with a token of its own.
    static func secondModerator(_ env: TestEnvironment) async throws -> (token: String, id: UUID) {
        let context = OperationContext.system("test", policies: env.policies)
        let op = try await env.database.runAsSystem(
            CreateOperator(email: "moderator2@test.example", role: .moderator, tenantID: nil), context: context)
        let (_, secret) = try await env.database.runAsSystem(
            CreateToken(operatorID: op.id, name: "test", expiresInHours: nil), context: context)
        return (secret.value, op.id)
    }

    @Test("a clean post is allowed and records nothing; a masked one is decided by the screen; a held one is queued")
    func screening() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let clean = try await client.call(
                    .post, "/v1/moderation/screen", token: app, json: Self.content(author, text: "Great run today"))
                #expect(clean.status == 200 && clean["action"] == "allow" && clean["case_id"] == nil, "\(clean.text)")
                let masked = try await client.call(
                    .post, "/v1/moderation/screen", token: app, json: Self.content(author, text: "this hill is sh!t"))
                #expect(masked["action"] == "mask" && masked["masked_text"] == "this hill is ****", "\(masked.text)")
                #expect(masked.json["rule_ids"] as? [String] == ["en.profanity"])
                #expect(masked["policy_digest"] == env.policies.moderation.digest)
                let held = try await client.call(
                    .post, "/v1/moderation/screen", token: app,
                    json: Self.content(author, id: "post-held", text: "just k1ll yourself"))
                #expect(held["action"] == "hold", "\(held.text)")
                let queue = try await client.call(
                    .get, "/v1/moderation/queue", token: env.fixture.tokens[.moderator]!)
                let items = queue.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1, "only the held post waits: \(queue.text)")
                #expect(items.first?["content_id"] as? String == "post-held")
                #expect(items.first?["opened_by"] as? String == "screen")
                #expect(items.first?["matched_rules"] as? [String] == ["en.self_harm"])
                let statements = try await client.call(
                    .get, "/v1/moderation/cases/\(masked["case_id"]!)/statements", token: app)
                let mask = (statements.json["items"] as? [[String: Any]])?.first ?? [:]
                #expect(mask["automated_decision"] as? Bool == true && mask["decision"] as? String == "mask")
            }
            #expect(try await env.auditCount("moderation.screen") == 2, "the mask and the hold, not the clean post")
            #expect(
                try await env.ownerScalar(
                    """
                    SELECT count(*) FROM moderation_decisions
                    WHERE policy_digest = '\(env.policies.moderation.digest)'
                    """,
                    as: Int64.self) == 2)
        }
    }

    @Test("30 reports at once fold into one case; a reporter counts once; a bad reason changes nothing")
    func foldedReports() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            let reporters = (0..<30).map { _ in UUID() }
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let answers = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for reporter in reporters + reporters.prefix(5) {
                        group.addTask {
                            try await client.call(
                                .post, "/v1/moderation/reports", token: app,
                                json: Self.report(author, id: "c-1", reporter: reporter))
                        }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.map(\.status))")
                #expect(Set(answers.compactMap { $0["case_id"] }).count == 1, "one case")
                #expect(answers.filter { $0.json["counted"] as? Bool == true }.count == 30)
                let bad = try await client.call(
                    .post, "/v1/moderation/reports", token: app,
                    json: Self.report(author, id: "c-2", reporter: UUID(), reason: "boredom"))
                #expect(bad.status == 422 && bad.text.contains("harassment"), "\(bad.text)")
                let own = try await client.call(
                    .post, "/v1/moderation/reports", token: app,
                    json: Self.report(author, id: "c-2", reporter: author.id))
                #expect(own.status == 422, "\(own.text)")
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM moderation_cases", as: Int64.self) == 1)
            #expect(try await env.ownerScalar("SELECT report_count FROM moderation_cases", as: Int32.self) == 30)
            #expect(try await env.ownerScalar("SELECT count(*) FROM moderation_reports", as: Int64.self) == 30)
            #expect(try await env.auditCount("moderation.report") == 30)
        }
    }

    @Test(
        """
        a lock decision locks through the accounts' operation: one decision, one lock, one audit event each; \
        its statement of reasons has every field; the app learns the removal
        """)
    func lockDecision() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let moderator = env.fixture.tokens[.moderator]!
                let held = try await client.call(
                    .post, "/v1/moderation/screen", token: app, json: Self.content(author, text: "kys loser"))
                let caseID = try #require(held["case_id"], "\(held.status) \(held.text)")
                let decision = #"{"decision":"lock","ground":"safety","explanation":"Told another member to die."}"#
                let decided = try await Self.decide(client, caseID, token: moderator, json: decision)
                #expect(decided.status == 201, "\(decided.text)")
                let statement = decided.json
                for field in [
                    "decision_id", "case_id", "content_kind", "content_id", "author_id", "decision", "removes_content",
                    "account_locked", "facts", "grounds", "explanation", "automated_detection", "automated_decision",
                    "decided_at", "redress", "policy_digest",
                ] {
                    #expect(statement[field] != nil, "the statement has \(field)")
                }
                #expect(
                    statement["account_locked"] as? Bool == true && statement["automated_decision"] as? Bool == false)
                #expect(statement["automated_detection"] as? Bool == true)
                #expect((statement["facts"] as? String ?? "").contains("en.self_harm"))
                #expect((statement["redress"] as? String ?? "").contains("appeal"))
                let grounds = statement["grounds"] as? [[String: Any]] ?? []
                #expect(grounds.first?["section"] as? String == "Keep each other safe")
                let again = try await Self.decide(client, caseID, token: moderator, json: decision)
                #expect(again.status == 409, "a decided case is decided once: \(again.text)")
                let removals = try await client.call(.get, "/v1/moderation/removals?since=0", token: app)
                let items = removals.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1 && items.first?["case_id"] as? String == caseID, "\(removals.text)")
                let next = try await client.call(
                    .get, "/v1/moderation/removals?since=\(removals["next_since"]!)", token: app)
                #expect((next.json["items"] as? [Any])?.isEmpty == true)
            }
            #expect(try await env.auditCount("moderation.decide") == 1)
            #expect(try await env.auditCount("accounts.lock") == 1)
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM account_locks WHERE customer_id = '\(author.id)'", as: Int64.self) == 1)
            #expect(
                try await env.ownerScalar(
                    "SELECT status FROM customers WHERE id = '\(author.id)'", as: String.self) == "locked")
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM moderation_decisions WHERE lock_id IS NOT NULL", as: Int64.self) == 1)
        }
    }

    @Test("a case another moderator holds is read-only for the others until the hold expires")
    func assignment() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            let other = try await Self.secondModerator(env)
            try await env.withApp { client in
                let held = try await client.call(
                    .post, "/v1/moderation/screen", token: env.fixture.tokens[.appService]!,
                    json: Self.content(author, text: "I know where you live"))
                let caseID = try #require(held["case_id"], "\(held.status) \(held.text)")
                let taken = try await client.call(
                    .post, "/v1/moderation/cases/\(caseID)/take", token: env.fixture.tokens[.moderator]!)
                #expect(taken.status == 200 && taken["assigned_to"] != nil, "\(taken.text)")
                let decision = #"{"decision":"remove","ground":"respect","explanation":"A threat."}"#
                for path in ["take", "decision"] {
                    let refused = try await client.call(
                        .post, "/v1/moderation/cases/\(caseID)/\(path)", token: other.token,
                        json: path == "decision" ? decision : nil)
                    #expect(refused.status == 409 && refused["code"] == "assigned_to_other", "\(refused.text)")
                    #expect(refused.text.contains("moderator@test.example"), "names who holds it")
                }
                let read = try await client.call(.get, "/v1/moderation/cases/\(caseID)", token: other.token)
                #expect(read.status == 200, "others may read it")
                env.clock.advance(by: 31 * 60)
                let afterExpiry = try await Self.decide(client, caseID, token: other.token, json: decision)
                #expect(afterExpiry.status == 201, "the hold expired after 30 minutes: \(afterExpiry.text)")
            }
            #expect(try await env.auditCount("moderation.decide") == 1)
        }
    }

    @Test("an appeal names its case; lifting it overturns the case and unlocks the author")
    func appealLinksCase() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let held = try await client.call(
                    .post, "/v1/moderation/screen", token: app, json: Self.content(author, text: "go die"))
                let caseID = try #require(held["case_id"], "\(held.status) \(held.text)")
                _ = try await Self.decide(
                    client, caseID, token: env.fixture.tokens[.moderator]!,
                    json: #"{"decision":"lock","ground":"safety","explanation":"Self-harm encouragement."}"#)
                let stranger = try await env.customer()
                let foreign = try await client.call(
                    .post, "/v1/customers/\(stranger.id.text)/appeals", token: app,
                    json: #"{"message":"not mine","case_id":"\#(caseID)"}"#)
                #expect(foreign.status == 404, "another author's case: \(foreign.text)")
                let appeal = try await client.call(
                    .post, "/v1/customers/\(author.id.text)/appeals", token: app,
                    json: #"{"message":"It was a joke between friends.","case_id":"\#(caseID)"}"#)
                #expect(
                    appeal.status == 201 && appeal["case_id"] == caseID && appeal["lock_id"] != nil, "\(appeal.text)")
                let lifted = try await client.call(
                    .post, "/v1/appeals/\(appeal["id"]!)/resolve", token: env.fixture.tokens[.backendManager]!,
                    json: #"{"decision":"lift","reason":"Context shows a joke."}"#)
                #expect(lifted.status == 200, "\(lifted.text)")
                let detail = try await client.call(
                    .get, "/v1/moderation/cases/\(caseID)", token: env.fixture.tokens[.moderator]!)
                #expect((detail.json["case"] as? [String: Any])?["overturned_at"] != nil, "\(detail.text)")
            }
            #expect(
                try await env.ownerScalar("SELECT status FROM customers WHERE id = '\(author.id)'", as: String.self)
                    == "active")
        }
    }

    @Test(
        """
        a decision names the case's version it was made on: a new screen of the content rewrites its text, so the \
        decision made on the old text is 412 (nothing decided); none or * is 428; on the new version it goes through
        """
    )
    func staleDecision() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let moderator = env.fixture.tokens[.moderator]!
                let caseID = try await Self.held(client, env, author, id: "p-stale", text: "i know where you live")
                let seen = try await client.call(.get, "/v1/moderation/cases/\(caseID)", token: moderator)
                let seenTag = try #require(seen.headers[.eTag])
                _ = try await client.call(
                    .post, "/v1/moderation/screen", token: app,
                    json: Self.content(author, id: "p-stale", text: "i know where you live, kys"))
                let decision = #"{"decision":"remove","ground":"respect","explanation":"A threat."}"#
                let path = "/v1/moderation/cases/\(caseID)/decision"
                let stale = try await client.call(
                    .post, path, token: moderator, json: decision, headers: ["If-Match": seenTag])
                #expect(stale.status == 412 && stale["code"] == "version_mismatch", "\(stale.text)")
                for tag in [nil, "*"] {
                    let unnamed = try await client.call(
                        .post, path, token: moderator, json: decision, headers: tag.map { ["If-Match": $0] } ?? [:])
                    #expect(unnamed.status == 428, "\(tag ?? "none"): \(unnamed.text)")
                }
                #expect(try await env.auditCount("moderation.decide") == 0)
                let now = try await client.call(.get, "/v1/moderation/cases/\(caseID)", token: moderator)
                #expect(
                    (now.json["case"] as? [String: Any])?["content_text"] as? String == "i know where you live, kys")
                let decided = try await client.call(
                    .post, path, token: moderator, json: decision, headers: ["If-Match": now.headers[.eTag] ?? ""])
                #expect(decided.status == 201, "\(decided.text)")
            }
        }
    }

    @Test("incitement to self-harm heads the queue as critical, above an insult three people reported as urgent")
    func selfHarmFirst() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                for _ in 0..<3 {
                    let reported = try await client.call(
                        .post, "/v1/moderation/reports", token: app,
                        json: Self.report(author, id: "insult", reporter: UUID()))
                    #expect(reported.status == 200, "\(reported.text)")
                }
                let held = try await client.call(
                    .post, "/v1/moderation/screen", token: app,
                    json: Self.content(
                        author, id: "kys", text: "Honestly just kill yourself if you can't finish a 5k"))
                #expect(held["action"] == "hold", "\(held.text)")
                let queue = try await client.call(.get, "/v1/moderation/queue", token: env.fixture.tokens[.moderator]!)
                let items = queue.json["items"] as? [[String: Any]] ?? []
                #expect(items.compactMap { $0["content_id"] as? String } == ["kys", "insult"], "\(queue.text)")
                #expect(items.compactMap { $0["severity"] as? Int } == [4, 3])
            }
        }
    }

    @Test("whoever decided a case does not resolve its appeal (403 own_decision, nothing changed); another person does")
    func appealGoesToSomeoneElse() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let manager = env.fixture.tokens[.backendManager]!
                let caseID = try await Self.held(client, env, author, text: "I know where you live")
                let decided = try await Self.decide(
                    client, caseID, token: manager,
                    json: #"{"decision":"remove","ground":"respect","explanation":"A threat."}"#)
                #expect(decided.status == 201, "\(decided.text)")
                let appeal = try await client.call(
                    .post, "/v1/customers/\(author.id.text)/appeals", token: app,
                    json: #"{"message":"Out of context.","case_id":"\#(caseID)"}"#)
                let path = "/v1/appeals/\(try #require(appeal["id"], "\(appeal.text)"))/resolve"
                let own = try await client.call(
                    .post, path, token: manager, json: #"{"decision":"uphold","reason":"I stand by it."}"#)
                #expect(own.status == 403 && own["code"] == "own_decision", "\(own.text)")
                #expect(try await env.auditCount("appeals.resolve") == 0)
                let other = try await client.call(
                    .post, path, token: env.fixture.tokens[.platformAdmin]!,
                    json: #"{"decision":"uphold","reason":"Read again: a threat."}"#)
                #expect(other.status == 200 && other["status"] == "upheld", "\(other.text)")
            }
        }
    }

    @Test("an author with the threshold's upheld cases is flagged in the queue; the dry run counts before saving")
    func repeatOffenders() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                let manager = env.fixture.tokens[.backendManager]!
                for index in 0..<3 {
                    let held = try await client.call(
                        .post, "/v1/moderation/screen", token: app,
                        json: Self.content(author, id: "p\(index)", text: "buy followers now"))
                    let removed = try await Self.decide(
                        client, try #require(held["case_id"], "\(held.text)"), token: manager,
                        json: #"{"decision":"remove","ground":"spam","explanation":"Advertising."}"#)
                    #expect(removed.status == 201, "\(removed.text)")
                }
                _ = try await client.call(
                    .post, "/v1/moderation/screen", token: app,
                    json: Self.content(author, id: "p3", text: "free bitcoin"))
                let queue = try await client.call(.get, "/v1/moderation/queue", token: env.fixture.tokens[.moderator]!)
                let first = (queue.json["items"] as? [[String: Any]])?.first?["author"] as? [String: Any] ?? [:]
                #expect(
                    first["repeat_offender"] as? Bool == true && first["upheld_cases"] as? Int == 3, "\(queue.text)")
                let dryRun = try await client.call(
                    .post, "/v1/moderation/repeat-offenders/dry-run", token: manager,
                    json: #"{"upheld_cases":4,"days":30}"#)
                #expect(
                    dryRun["flagged_authors"] == "0" && dryRun["currently_flagged_authors"] == "1", "\(dryRun.text)")
                let bad = try await client.call(
                    .post, "/v1/moderation/repeat-offenders/dry-run", token: manager,
                    json: #"{"upheld_cases":0,"days":30}"#)
                #expect(bad.status == 400 || bad.status == 422, "\(bad.text)")
                let saved = try await client.call(
                    .put, "/v1/moderation/repeat-offenders", token: manager, json: #"{"upheld_cases":4,"days":30}"#)
                #expect(saved.status == 200, "\(saved.text)")
                let after = try await client.call(.get, "/v1/moderation/queue", token: env.fixture.tokens[.moderator]!)
                let flag = (after.json["items"] as? [[String: Any]])?.first?["author"] as? [String: Any] ?? [:]
                #expect(flag["repeat_offender"] as? Bool == false, "the saved threshold applies")
            }
            #expect(try await env.auditCount("moderation.set_threshold") == 1)
        }
    }

    @Test("partners see nothing of moderation: refused by the policy, and invisible with the service's filter removed")
    func partnersSeeNothing() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                _ = try await client.call(
                    .post, "/v1/moderation/screen", token: env.fixture.tokens[.appService]!,
                    json: Self.content(author, text: "kill yourself"))
                for token in [env.fixture.partners[0].adminToken, env.fixture.partners[0].staffToken] {
                    for path in ["/v1/moderation/queue", "/v1/moderation/removals", "/v1/moderation/statements"] {
                        let refused = try await client.call(.get, path, token: token)
                        #expect(refused.status == 403, "\(path): \(refused.text)")
                    }
                }
                let expert = try await client.call(.get, "/v1/moderation/queue", token: env.fixture.tokens[.expert]!)
                #expect(expert.status == 403)
            }
            let partner = env.fixture.partners[0].admin
            for table in ["moderation_cases", "moderation_decisions", "moderation_reports"] {
                let problem = await env.asService(
                    partner,
                    "DO $$ BEGIN IF (SELECT count(*) FROM \(table)) > 0 THEN RAISE EXCEPTION 'visible'; END IF; END $$")
                #expect(
                    problem == nil, "\(table) is invisible to a partner's transaction: \(String(describing: problem))")
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM moderation_cases", as: Int64.self) == 1)
        }
    }

    @Test(
        """
        the transparency export has one statement per line for the period, each the very object the API answers \
        for its case (lower-case ids, times with milliseconds), valid against the contract's StatementOfReasons
        """
    )
    func export() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                var cases: [String] = []
                for text in ["damn it", "crap", "you idiot"] {
                    let screened = try await client.call(
                        .post, "/v1/moderation/screen", token: env.fixture.tokens[.appService]!,
                        json: Self.content(author, text: text))
                    cases.append(try #require(screened["case_id"]))
                }
                let export = try await client.call(
                    .get, "/v1/moderation/statements", token: env.fixture.tokens[.auditor]!)
                #expect(export.status == 200)
                let lines = export.text.split(separator: "\n")
                #expect(lines.count == 3, "\(export.text)")
                for (line, caseID) in zip(lines, cases) {
                    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary
                    #expect(object?["decision"] as? String == "mask" && object?["automated_detection"] as? Bool == true)
                    let answered = try await client.call(
                        .get, "/v1/moderation/cases/\(caseID)/statements", token: env.fixture.tokens[.auditor]!)
                    let item = (answered.json["items"] as? [[String: Any]])?.first.map { $0 as NSDictionary }
                    #expect(object == item, "the export's line is the API's object: \(line) vs \(answered.text)")
                    #expect(object?["case_id"] as? String == caseID && caseID == caseID.lowercased())
                    _ = try JSONDecoder.contract.decode(
                        Components.Schemas.StatementOfReasons.self, from: Data(line.utf8))
                }
            }
        }
    }

    @Test("/metrics has the open cases, the oldest one's age, decisions by kind and the time to decision")
    func metrics() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            try await env.withApp { client in
                let app = env.fixture.tokens[.appService]!
                for text in ["kill yourself", "i know where you live"] {
                    _ = try await client.call(
                        .post, "/v1/moderation/screen", token: app, json: Self.content(author, text: text))
                }
                env.clock.advance(by: 600)
                let gauges = ModerationGaugesService(
                    database: env.database, policies: env.policies, interval: .seconds(1))
                try await gauges.count()
                let metrics = try await client.call(.get, "/metrics", token: nil).text
                let open = metrics.split(separator: "\n").first { $0.hasPrefix("backoffice_moderation_open_cases ") }
                #expect(open.flatMap { Double($0.split(separator: " ").last ?? "") } == 2, "\(open ?? "none")")
                let oldest = metrics.split(separator: "\n").first {
                    $0.hasPrefix("backoffice_moderation_oldest_open_case_seconds ")
                }
                #expect(oldest.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0 >= 600)
                #expect(metrics.contains("backoffice_moderation_decisions_total{kind=\"hold\"}"))
            }
        }
    }

    @Test("two moderators taking and deciding one case 30 times at once: one holds it, one decision, one lock")
    func concurrentTakesAndDecisions() async throws {
        try await TestEnvironment.with { env in
            let author = try await env.customer()
            let other = try await Self.secondModerator(env)
            try await env.withApp { client in
                let held = try await client.call(
                    .post, "/v1/moderation/screen", token: env.fixture.tokens[.appService]!,
                    json: Self.content(author, text: "kill yourself"))
                let caseID = try #require(held["case_id"])
                let tokens = [env.fixture.tokens[.moderator]!, other.token]
                let takes = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for index in 0..<30 {
                        group.addTask {
                            try await client.call(
                                .post, "/v1/moderation/cases/\(caseID)/take", token: tokens[index % 2])
                        }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                let holders = Set(takes.filter { $0.status == 200 }.compactMap { $0["assigned_to"] })
                #expect(holders.count == 1, "one moderator holds it: \(takes.map(\.status))")
                #expect(takes.allSatisfy { $0.status == 200 || $0["code"] == "assigned_to_other" })
                let decision = #"{"decision":"lock","ground":"safety","explanation":"Self-harm encouragement."}"#
                let decisions = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for index in 0..<30 {
                        group.addTask {
                            try await Self.decide(client, caseID, token: tokens[index % 2], json: decision)
                        }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                #expect(decisions.filter { $0.status == 201 }.count == 1, "\(decisions.map(\.status))")
            }
            #expect(try await env.auditCount("moderation.decide") == 1)
            #expect(try await env.auditCount("accounts.lock") == 1)
            #expect(
                try await env.ownerScalar(
                    "SELECT count(*) FROM account_locks WHERE customer_id = '\(author.id)'", as: Int64.self) == 1)
        }
    }
}
