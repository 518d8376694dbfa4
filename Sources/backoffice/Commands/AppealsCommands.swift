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
    }
}
