import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

struct Activity: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            """
            Report activity as the app does (app_service): a JSON Lines file of events, sent in batches of up to \
            5,000.
            """,
        discussion: """
            Each line: {"event_id":…,"customer_id":…,"metric":"steps","value":5000,\
            "occurred_at":"2026-11-23T08:00:00Z"}.
            Prints every event's outcome (accepted, duplicate, rejected with its reason).
            Example: backoffice activity ingest events.jsonl --token $APP_TOKEN
            """,
        subcommands: [Ingest.self])

    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a JSON Lines file of activity events.")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "A JSON Lines file of events.") var file: String
        @Option(help: "Events per request (1–5,000).") var batch: Int = 5_000

        func run() async throws {
            guard (1...5_000).contains(batch) else { throw ValidationError("--batch must be from 1 to 5,000") }
            try await global.show(.rows(key: "events", ["event_id", "status", "reason", "message", "points"])) {
                client in
                let text = try readTextFile(file)
                var events: [Components.Schemas.ActivityEventInput] = []
                let decoder = contractJSONDecoder()
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
                    do {
                        events.append(
                            try decoder.decode(Components.Schemas.ActivityEventInput.self, from: Data(line.utf8)))
                    } catch {
                        throw CLIFailure(
                            message: "error: \(file):\(number + 1): not an activity event: \(error)", exitCode: 6)
                    }
                }
                guard !events.isEmpty else { throw CLIFailure(message: "error: \(file) holds no events", exitCode: 6) }
                var outcome: Components.Schemas.ActivityBatchOutcome?
                for start in stride(from: 0, to: events.count, by: batch) {
                    let answer = try await client.ingestActivity(
                        headers: .init(idempotencyKey: global.changeKey()),
                        body: .json(.init(events: Array(events[start..<min(start + batch, events.count)]))))
                    guard case .ok(let ok) = answer else { return answer }
                    let part = try ok.body.json
                    outcome =
                        outcome.map {
                            .init(
                                batchId: part.batchId, ruleVersion: part.ruleVersion,
                                accepted: $0.accepted + part.accepted,
                                duplicates: $0.duplicates + part.duplicates, rejected: $0.rejected + part.rejected,
                                points: $0.points + part.points,
                                events: $0.events + part.events)
                        } ?? part
                }
                return Operations.IngestActivity.Output.ok(.init(body: .json(outcome!)))
            }
        }
    }
}
