import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

struct Payments: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payments",
        abstract: "Card payments at the provider: reconcile what its webhooks did not tell (backend managers).",
        subcommands: [Reconcile.self])

    struct Reconcile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reconcile",
            abstract:
                "Ask the provider about payments whose verdict was never recorded and settle their orders (audited).",
            discussion: "Example: backoffice payments reconcile --older-than-minutes 30   (cron: every 10 minutes)")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Only payments pending at least this long (default 10).") var olderThanMinutes: Int?

        func run() async throws {
            try await global.show(.single(["checked", "completed", "cancelled", "still_pending"])) {
                try await $0.reconcilePayments(body: .json(.init(olderThanMinutes: olderThanMinutes)))
            }
        }
    }
}
