import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("End to end: the reward economy from the CLI")
struct RewardsCLITests {
    @Test(
        """
        fitpoints adjust|balance, rules set with --dry-run and a malformed file, activity ingest, a challenge \
        from flags and its board: exit codes and answers
        """
    )
    func rewards() async throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: backofficeExecutable),
            "build the package first: \(backofficeExecutable)")
        try await TestEnvironment.with { env in
            let customer = try await env.customer().id.uuidString.lowercased()
            try await withServer(env) { base in
                let manager = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.backendManager]!]
                let app = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.appService]!]
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "rewards-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }

                let credit = try cli(
                    [
                        "fitpoints", "adjust", customer, "--points", "40", "--reason", "Welcome gift", "--output",
                        "json",
                    ], manager)
                #expect(credit.status == 0, "\(credit.output)")
                let overdraft = try cli(
                    ["fitpoints", "adjust", customer, "--points", "-41", "--reason", "Reversal"], manager)
                #expect(overdraft.status == 5)
                #expect(overdraft.output.contains("insufficient_fitpoints"))
                #expect(
                    try cli(["fitpoints", "balance", customer, "--output", "csv"], manager).output.contains(
                        "\(customer),40,40,0"))

                let malformed = folder.appendingPathComponent("bad.yaml").path
                try "metrics:\n  - metric: steps\n    daily_cap: 10\n".write(
                    toFile: malformed, atomically: true, encoding: .utf8)
                let refused = try cli(["fitpoints", "rules", "set", malformed], manager)
                #expect(refused.status == 6)
                #expect(refused.output.contains("metrics[0].points_per_unit: is required"))
                let rules = projectRoot.appendingPathComponent("policies/fitpoints/earning-rules.yaml").path
                let dry = try cli(
                    ["fitpoints", "rules", "set", rules, "--dry-run", "--days", "7", "--output", "json"], manager)
                #expect(dry.status == 0, "\(dry.output)")
                #expect(try cli(["fitpoints", "rules", "show"], manager).status == 3, "a dry run sets nothing")
                let held = try cli(
                    ["fitpoints", "rules", "set", rules, "--reason", "Launch", "--output", "json"], manager)
                #expect(held.status == 0, "\(held.output)")
                #expect(held.output.hasPrefix("held for a second person's approval"), "said on stderr")
                let json = held.output.drop { $0 != "{" }
                let request = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
                #expect(
                    request["status"] as? String == "pending" && request["action"] as? String == "fitpoints_rules.set")
                #expect(try cli(["fitpoints", "rules", "show"], manager).status == 3, "held: nothing set yet")
                let admin = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.platformAdmin]!]
                #expect(try cli(["approvals", "approve", try #require(request["id"] as? String)], admin).status == 0)
                #expect(try cli(["fitpoints", "rules", "show"], manager).status == 0, "approved: in force")

                let now = Date()
                let window = [
                    "--starts-at", RFC3339(now.addingTimeInterval(-3600)), "--ends-at",
                    RFC3339(now.addingTimeInterval(3600)),
                ]
                let created = try cli(
                    [
                        "challenges", "create", "--name", "Lunch Walk", "--metric", "steps", "--aggregation", "sum",
                        "--budget", "100", "--rank",
                        "1-1:50", "--output", "json",
                    ]
                        + window, manager)
                #expect(created.status == 0, "\(created.output)")
                let challenge = try #require(
                    (try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])?["id"]
                        as? String)
                #expect(try cli(["challenges", "publish", challenge], manager).status == 0)
                #expect(
                    try cli(["challenges", "create", "--name", "x", "--rank", "first:10"] + window, manager).status
                        == 64)

                let events = folder.appendingPathComponent("events.jsonl").path
                try [
                    #"""
                    {"event_id":"cli-1","customer_id":"\#(customer)","metric":"steps","value":8000,\#
                    "occurred_at":"\#(RFC3339(now.addingTimeInterval(-60)))"}
                    """#,
                    #"""
                    {"event_id":"cli-2","customer_id":"\#(customer)","metric":"heartbeats","value":1,\#
                    "occurred_at":"\#(RFC3339(now))"}
                    """#,
                ].joined(separator: "\n").write(toFile: events, atomically: true, encoding: .utf8)
                let ingested = try cli(["activity", "ingest", events, "--output", "csv"], app)
                #expect(ingested.status == 0, "\(ingested.output)")
                #expect(ingested.output.contains("cli-1,accepted,,,80"))
                #expect(ingested.output.contains("cli-2,rejected,unknown_metric"))
                let board = try cli(["challenges", "leaderboard", challenge, "--output", "csv"], app)
                #expect(board.output.contains("1,\(customer),8000"), "\(board.output)")
                #expect(
                    try cli(["fitpoints", "balance", customer, "--output", "json"], manager).output.contains(
                        "\"balance\" : 120"))
            }
        }
    }

    func RFC3339(_ date: Date) -> String { date.formatted(.iso8601) }
}
