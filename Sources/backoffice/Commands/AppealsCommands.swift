import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Accounts {
    struct Appeals: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "appeals",
            abstract: "Appeals against locks: list, show, resolve (managers); file (the app's service principal).",
            discussion: "Example: backoffice accounts appeals list --status open",
            subcommands: [List.self, Show.self, Resolve.self, File.self])

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "show",
                abstract: "Show one appeal with its resolution.",
                discussion: "Example: backoffice accounts appeals show 9d2e…")
            @OptionGroup(title: "Global Options") var global: GlobalOptions
            @Argument(help: "Appeal id.") var id: String

            func run() async throws {
                try await global.show(.single(appealColumns)) { try await $0.getAppeal(path: .init(appealId: id)) }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list",
                abstract: "List appeals, oldest first.",
                discussion: "Example: backoffice accounts appeals list --status open")
            @OptionGroup(title: "Global Options") var global: GlobalOptions
            @Option(help: "open, upheld or lifted.") var status: Components.Schemas.AppealStatus?
            @OptionGroup(title: "Paging") var page: PageOptions

            func run() async throws {
                try await global.show(.page(appealColumns)) { client in
                    try await client.listAppeals(query: .init(limit: page.limit, cursor: page.cursor, status: status))
                }
            }
        }

        struct Resolve: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "resolve",
                abstract: "Resolve an open appeal: --uphold keeps the lock, --lift unlocks the account.",
                discussion:
                    "Example: backoffice accounts appeals resolve 9a1e… --lift --reason \"Customer proved ownership\"")
            @OptionGroup(title: "Global Options") var global: GlobalOptions
            @Argument(help: "Appeal id.") var id: String
            @Flag(help: "Keep the lock.") var uphold = false
            @Flag(help: "Lift the lock.") var lift = false
            @Option(help: "Why (recorded in the audit log).") var reason: String

            func validate() throws {
                guard uphold != lift else { throw ValidationError("Give exactly one of --uphold or --lift.") }
            }

            func run() async throws {
                try await global.show(.single(appealColumns)) { client in
                    try await client.resolveAppeal(
                        path: .init(appealId: id), headers: .init(idempotencyKey: global.changeKey()),
                        body: .json(.init(decision: lift ? .lift : .uphold, reason: reason)))
                }
            }
        }

        struct File: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "file",
                abstract: "File an appeal for a locked account, or against a moderation decision (app_service token).",
                discussion: """
                    Example: backoffice accounts appeals file 5f0c… --message "I was travelling, it was me"
                    Example: backoffice accounts appeals file 5f0c… --case 3f9a… --message "It was a joke"
                    """)
            @OptionGroup(title: "Global Options") var global: GlobalOptions
            @Argument(help: "Customer id.") var id: String
            @Option(help: "The customer's message.") var message: String
            @Option(name: .customLong("case"), help: "The moderation case whose decision is contested.") var caseID:
                String?

            func run() async throws {
                try await global.show(.single(appealColumns)) { client in
                    try await client.fileAppeal(
                        path: .init(customerId: id), headers: .init(idempotencyKey: global.changeKey()),
                        body: .json(.init(message: message, caseId: caseID)))
                }
            }
        }
    }
}
