import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation

/// `backoffice maintenance`: housekeeping under `policies/retention.yaml`.
struct Maintenance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Housekeeping.", discussion: "Example: backoffice maintenance purge --dry-run",
        subcommands: [Purge.self])

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Apply policies/retention.yaml: purge old deleted accounts, expired idempotency records, old login \
                attempts, console sign-in attempts past their window and expired staged goods files (audited).
                """,
            discussion: "Example: backoffice maintenance purge --dry-run")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Flag(help: "Only list what would be purged.") var dryRun = false

        func run() async throws {
            try await runCommand {
                let output = try await global.client().purgeDeletedAccounts(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(.init(dryRun: dryRun)))
                let ok = try answered(output).ok
                let report = try ok.body.json
                if global.format == .table {
                    let verb = report.dryRun ? "would purge" : "purged"
                    print(
                        """
                        \(verb) \(report.purged.count) accounts deleted more than \
                        \(report.retentionDays ?? 0) days ago
                        """
                    )
                    report.purged.forEach { print("  \($0)") }
                    print(
                        """
                        \(verb) \(report.idempotencyKeys) expired idempotency records, \
                        \(report.loginAttempts) old login attempts, \(report.signInAttempts) console sign-in \
                        attempts past their window, \(report.stagedImports) expired staged goods files, \
                        \(report.clientAssertions ?? 0) spent OAuth client assertions, \(report.accessTokens ?? 0) \
                        expired OAuth access tokens
                        """
                    )
                } else {
                    try Printer(format: global.format).single(
                        report,
                        columns: ["dry_run", "retention_days", "purged", "idempotency_keys", "login_attempts"])
                }
            }
        }
    }
}
