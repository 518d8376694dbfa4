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
}
