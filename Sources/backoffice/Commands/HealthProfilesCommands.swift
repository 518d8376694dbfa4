import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension HealthProfiles {
    struct Show: AsyncParsableCommand {
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

    struct VerifyLog: AsyncParsableCommand {
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
}
