import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

struct Orders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orders",
        abstract: "Your shop's orders: list, show, accept, ship, deliver, cancel, refund (partner tokens).",
        discussion: """
            An order moves pending_payment → paid → accepted → shipped → delivered; it can be cancelled \
            before it ships (stock, FitPoints and the card authorization released) and refunded after.

            Example: backoffice orders list --status paid && backoffice orders accept 8c1f…
            """,
        subcommands: [
            List.self, Show.self, Accept.self, Ship.self, Deliver.self, Cancel.self, Refund.self,
        ])
}

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
