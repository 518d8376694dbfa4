/// The generated Swift file: the column sets, the command groups (`x-cli-groups`), each `x-cli`
/// operation's command as an extension of its group, and the enumerations an option accepts.
struct SwiftSource {
    let contract: Contract

    var text: String {
        get throws {
            var lines = [
                "// Generated from openapi.yaml's x-cli blocks by CLIGenerator (the CLICommands build plugin).",
                "// Do not edit: change the contract.", "import ArgumentParser", "import BackofficeAPI",
                "import Foundation", "",
                "/// The fields a table shows of each resource (`x-cli-columns` in openapi.yaml).",
                "enum CLIColumns {",
            ]
            for (name, columns) in contract.columnSets {
                let list = columns.map(SwiftName.literal).joined(separator: ", ")
                lines.append("    static let \(SwiftName.member(name)): [String] = [\(list)]")
            }
            lines.append("}")
            for (path, group) in contract.groups { lines += [""] + Self.lines(ofGroup: path, group) }
            var enumerations = Set(contract.enumerationSchemas.map { "Components.Schemas.\(SwiftName.type($0))" })
            for operation in contract.commandOperations {
                let command = try Command(operation)
                lines += [""] + Self.lines(of: command)
                enumerations.formUnion(command.inputs.compactMap(\.enumeration))
            }
            lines.append("")
            lines += enumerations.sorted().map { "extension \($0): ExpressibleByArgument {}" }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// A group: its name, help and subcommands, as a struct (nested in its parent's extension).
    static func lines(ofGroup path: String, _ group: Mapping) -> [String] {
        let parts = path.split(separator: ".").map(String.init)
        let examples = group.texts("example").map { "Example: \($0)" }
        let discussion = (group.texts("discussion") + examples).joined(separator: "\n\n")
        let subcommands = group.texts("subcommands").map { "\($0).self" }.joined(separator: ", ")
        let indent = parts.count > 1 ? "    " : ""
        var lines = [
            "\(indent)struct \(parts.last ?? ""): AsyncParsableCommand {",
            "\(indent)    static let configuration = CommandConfiguration(",
            "\(indent)        commandName: \(SwiftName.literal(group.text("name") ?? "")),",
            "\(indent)        abstract: \(SwiftName.literal(group.text("abstract") ?? "")),",
            "\(indent)        discussion: \(SwiftName.literal(discussion)),",
            "\(indent)        subcommands: [\(subcommands)])",
            "\(indent)}",
        ]
        if parts.count > 1 { lines = ["extension \(parts.dropLast().joined(separator: ".")) {"] + lines + ["}"] }
        return lines
    }

    static func lines(of command: Command) -> [String] {
        let group = command.typePath.dropLast().joined(separator: ".")
        let name = command.typePath.last ?? ""
        var lines = [
            "extension \(group) {",
            "    struct \(name): AsyncParsableCommand {",
            "        static let configuration = CommandConfiguration(",
            "            " + command.configuration.joined(separator: ",\n            ") + ")",
            "        @OptionGroup(title: \"Global Options\") var global: GlobalOptions",
        ]
        lines += command.inputs.filter { !$0.declaration.isEmpty }.map { "        " + $0.declaration }
        lines += [
            "",
            "        func run() async throws {",
            "            try await global.show(\(command.layout)) { client in",
            "                try await \(command.call)",
            "            }",
            "        }",
            "    }",
            "}",
        ]
        return lines
    }
}
