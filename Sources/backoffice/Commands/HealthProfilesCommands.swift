import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

struct HealthProfiles: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Customers' health profiles, read one at a time for a purpose; who read them; the customer's data.",
        discussion: """
            Every read of a profile names a purpose (policies/privacy.yaml) and is recorded in the access log, \
            which the customer can see. The access log is hash-chained: `verify-log` checks it online; \
            `export-log` writes it as JSON lines for `audit verify --offline` (ops/audit-daily seals it daily).

            Example: backoffice health-profiles show 5b1c… --purpose support_request
            """,
        subcommands: [Show.self, Sync.self, Accesses.self, ExportData.self, VerifyLog.self, ExportLog.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A customer's health profile (the read is recorded with its purpose).",
            discussion: """
                Purposes: support_request, appeal_review, safety_review, data_request, audit (as \
                policies/privacy.yaml lists them). Auditors see ranges, not values.

                Example: backoffice health-profiles show 5b1c… --purpose support_request
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var customer: String
        @Option(help: "Why you read it (a code of policies/privacy.yaml).") var purpose: String

        func run() async throws {
            let columns = [
                "customer_id", "version", "synced_at", "height_cm", "weight_kg", "age", "sex", "weight_goal",
                "target_weight_kg", "target_date", "daily_calorie_goal", "activity_level", "flags", "ranges",
                "access_id",
            ]
            try await global.show(.single(columns)) {
                try await $0.getHealthProfile(path: .init(customerId: customer), query: .init(purpose: purpose))
            }
        }
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store a customer's profile as the app does (app_service).",
            discussion: """
                The file is the contract's HealthProfileSync: height_cm, weight_kg, birth_year, sex, weight_goal, \
                target_weight_kg, target_date, daily_calorie_goal, activity_level.

                Example: backoffice health-profiles sync 5b1c… --file examples/health-profile.json
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var customer: String
        @Option(help: "A JSON file with the profile.") var file: String

        func run() async throws {
            try await global.show(.single(["customer_id", "version", "changed", "flags"])) { client in
                let body = try readStructuredFile(Components.Schemas.HealthProfileSync.self, at: file)
                return try await client.syncHealthProfile(path: .init(customerId: customer), body: .json(body))
            }
        }
    }

    struct Accesses: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Who read a customer's health profile, when, why and how; newest first.",
            discussion: "Example: backoffice health-profiles accesses 5b1c…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Paging") var page: PageOptions
        @Argument(help: "Customer id.") var customer: String

        func run() async throws {
            try await global.show(.page(["id", "occurred_at", "actor_id", "actor_role", "purpose", "via"])) {
                try await $0.listHealthProfileAccesses(
                    path: .init(customerId: customer), query: .init(limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct ExportData: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Everything the back office holds about a customer, as one JSON document (app_service).",
            discussion: "Example: backoffice health-profiles export-data 5b1c… --file customer-5b1c.json")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var customer: String
        @Option(help: "Write to this file instead of stdout.") var file: String?

        func run() async throws {
            try await runCommand {
                let ok = try answered(try await global.client().exportCustomerData(path: .init(customerId: customer)))
                    .ok
                try await Transfer.download(
                    try ok.body.applicationVnd_healthtrack_customerData, to: file, counting: "lines")
            }
        }
    }

    struct VerifyLog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify the access log's chains; exit 8 naming the first bad event.",
            discussion: "Example: backoffice health-profiles verify-log")
        @OptionGroup(title: "Global Options") var global: GlobalOptions

        func run() async throws {
            try await runCommand {
                let ok = try answered(try await global.client().verifyHealthAccessLog(body: .json(.init()))).ok
                let report = try ok.body.json
                if let failure = report.failure {
                    print("TAMPERED: \(failure.kind.rawValue) — \(failure.detail)")
                    if let id = failure.eventId { print("first bad event: \(id) (chain \(failure.chain))") }
                    throw ExitCode(8)
                }
                print("intact: \(report.events) access events in \(report.chains) chains")
            }
        }
    }

    struct ExportLog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export the access log as JSON lines, streamed, for `audit verify --offline`.",
            discussion: """
                Example: backoffice health-profiles export-log --since 2026-11-26T00:00:00Z \
                --until 2026-11-27T00:00:00Z --file access-2026-11-26.jsonl
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "RFC 3339: events at or after.") var since: String?
        @Option(help: "RFC 3339: events before.") var until: String?
        @Option(help: "Write to this file instead of stdout.") var file: String?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().exportHealthAccessLog(
                    query: .init(since: try parseTime(since, "--since"), until: try parseTime(until, "--until")))
                let ok = try answered(output).ok
                try await Transfer.download(try ok.body.applicationJsonl, to: file, counting: "access events")
            }
        }
    }
}
