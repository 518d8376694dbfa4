import ArgumentParser
import BackofficeAPI
import BackofficePlatform

/// A move of one resource by its id (accept, ship, approve, lock, publish …): what it is called and
/// says in --help, the arguments it takes (the id, and the move's own options), the one call it
/// makes with a fresh Idempotency-Key, and the columns of the resource it shows afterwards.
/// `MoveCommand` is the command of every move; a domain declares only this.
protocol Move {
    associatedtype Arguments: ParsableArguments
    associatedtype Output
    static var configuration: CommandConfiguration { get }
    static var columns: [String] { get }
    static func send(_ client: Client, _ arguments: Arguments, key: String) async throws -> Output
}

/// The command of a `Move`: global options, the move's arguments, one call, the resource shown.
struct MoveCommand<M: Move>: AsyncParsableCommand {
    static var configuration: CommandConfiguration { M.configuration }
    @OptionGroup(title: "Global Options") var global: GlobalOptions
    @OptionGroup var arguments: M.Arguments

    func run() async throws {
        try await global.show(.single(M.columns)) { try await M.send($0, arguments, key: global.changeKey()) }
    }
}

/// The id of the resource a move is made on.
struct ResourceID<Name: ResourceName>: ParsableArguments {
    @Argument(help: ArgumentHelp("\(Name.name) id.")) var id: String
}

/// A move's id with the reason it is made for (recorded in the audit log).
struct ResourceIDWithReason<Name: ResourceName>: ParsableArguments {
    @Argument(help: ArgumentHelp("\(Name.name) id.")) var id: String
    @Option(help: "Why (recorded in the audit log).") var reason: String
}

/// The name of a resource, as an id argument's help says it (`Order id.`).
protocol ResourceName { static var name: String { get } }
