import ArgumentParser
import BackofficeAPI
import Foundation

let walletColumns = ["customer_id", "balance", "credited", "debited", "updated_at"]
let ledgerColumns = ["id", "created_at", "kind", "points", "counterparty", "reason", "rule_id", "rule_version", "source_event_id", "challenge_id"]

struct FitPoints: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fitpoints",
        abstract: "Customers' FitPoints: balance, ledger entries, a manager's adjustment.",
        discussion: "Example: backoffice fitpoints adjust 5f0c… --points -200 --reason \"Duplicate reward reversed\"",
        subcommands: [Balance.self, Ledger.self, Adjust.self])

    struct Balance: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A customer's balance, with everything ever credited and debited.", discussion: "Example: backoffice fitpoints balance 5f0c…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String

        func run() async throws {
            try await global.show(.single(walletColumns)) { try await $0.getFitPoints(path: .init(customerId: id)) }
        }
    }

    struct Ledger: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A customer's ledger entries, newest first: points (+ received, − spent), the other account, and their cause.",
            discussion: "Example: backoffice fitpoints ledger 5f0c… --limit 20")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var page: PageOptions
        @Argument(help: "Customer id.") var id: String

        func run() async throws {
            try await global.show(.page(ledgerColumns)) {
                try await $0.fitPointsLedger(path: .init(customerId: id), query: .init(limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct Adjust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Correct a customer's FitPoints: positive points are credited, negative debited (never below zero; reason required).",
            discussion: "Example: backoffice fitpoints adjust 5f0c… --points 150 --reason \"Steps lost in the March sync outage\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String
        @Option(parsing: .unconditional, help: "Points to credit (positive) or debit (negative), at most 1,000,000 either way.") var points: Int64
        @Option(help: "Why (recorded in the ledger and the audit log).") var reason: String

        func run() async throws {
            try await global.show(.single(["entry.id", "entry.kind", "entry.points", "entry.reason", "balance.balance"])) { client in
                try await client.adjustFitPoints(
                    path: .init(customerId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(points: points, reason: reason)))
            }
        }
    }
}
