import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

struct Badges: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badges",
        abstract: "Badges: create, list, and the badges a customer holds.",
        discussion:
            "Example: backoffice badges create first-5k --name \"First 5K\" --metric distance_m --threshold 5000",
        subcommands: [Create.self, List.self, Held.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract:
                "Define a badge; with --metric and --threshold it is awarded to whoever reports one event reaching it.",
            discussion: "Example: backoffice badges create winter-champion --name \"Winter Champion\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Slug (lower-case letters, digits, dashes).") var slug: String
        @Option(help: "Name shown in the app.") var name: String
        @Option(help: "Description.") var description: String?
        @Option(help: "Metric of the awarding rule.") var metric: String?
        @Option(help: "Threshold one event must reach.") var threshold: Double?

        func run() async throws {
            try await global.show(.single(["slug", "name", "metric", "threshold", "created_at"])) { client in
                try await client.createBadge(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(slug: slug, name: name, description: description, metric: metric, threshold: threshold)))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Every badge.", discussion: "Example: backoffice badges list")
        @OptionGroup(title: "Global Options") var global: GlobalOptions

        func run() async throws {
            try await global.show(.page(["slug", "name", "metric", "threshold", "created_at"])) {
                try await $0.listBadges()
            }
        }
    }

    struct Held: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "held",
            abstract: "The badges a customer holds, newest first.", discussion: "Example: backoffice badges held 5f0c…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String

        func run() async throws {
            try await global.show(.page(["badge.slug", "badge.name", "source", "awarded_at"])) {
                try await $0.customerBadges(path: .init(customerId: id))
            }
        }
    }
}
