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
            for (path, group) in contract.groups {
                lines += [""] + Self.lines(ofGroup: path, group)
                for (name, command) in group.mapping("written")?.pairs ?? [] {
                    guard let help = command as? Mapping else { continue }
                    lines += [""] + Self.lines(ofWritten: "\(path).\(name)", help)
                }
            }
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

    /// A hand-written command's help (a group's `written` entry: `abstract`, `discussion`, `example`,
    /// and `name` when it is not ArgumentParser's from the type), so that every command's help is
    /// in the contract beside the generated ones'.
    static func lines(ofWritten path: String, _ help: Mapping) -> [String] {
        let examples = help.texts("example").map { "Example: \($0)" }
        let discussion = (help.texts("discussion") + examples).joined(separator: "\n\n")
        let name = help.text("name").map { "commandName: \(SwiftName.literal($0)), " } ?? ""
        return [
            "extension \(path) {",
            "    static let configuration = CommandConfiguration(",
            "        \(name)abstract: \(SwiftName.literal(help.text("abstract") ?? "")),",
            "        discussion: \(SwiftName.literal(discussion)))",
            "}",
        ]
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
            "\(indent)        abstract: \(SwiftName.literal(group.text("abstract") ?? "")),",
            "\(indent)        discussion: \(SwiftName.literal(discussion)),",
            "\(indent)        subcommands: [\(subcommands)])",
            "\(indent)}",
        ]
        if let name = group.text("name") {
            lines.insert("\(indent)        commandName: \(SwiftName.literal(name)),", at: 2)
        }
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
        guard let download = command.download else {
            return lines + [
                "",
                "        func run() async throws {",
                "            try await global.show(\(command.layout)) { client in",
                "                try await \(command.call)",
                "            }",
                "        }",
                "    }",
                "}",
            ]
        }
        let counting = SwiftName.literal(download.counting)
        // `csvOrJsonl`: an answer in the format asked (`--format`), CSV's header line not counted.
        let write =
            download.body == "csvOrJsonl"
            ? [
                "                switch ok.body {",
                "                case .csv(let body):",
                "                    try await Transfer.download(",
                "                        body, to: file, counting: \(counting), skippingHeaderLine: true)",
                "                case .applicationXNdjson(let body):",
                "                    try await Transfer.download(body, to: file, counting: \(counting))",
                "                }",
            ]
            : [
                "                try await Transfer.download(",
                "                    try ok.body.\(download.body), to: file,",
                "                    counting: \(counting))",
            ]
        return lines + [
            "        @Option(help: \"Write to this file instead of stdout.\") var file: String?",
            "",
            "        func run() async throws {",
            "            try await runCommand {",
            "                let client = try global.client()",
            "                let ok = try answered(try await \(command.call)).ok",
        ] + write + [
            "            }",
            "        }",
            "    }",
            "}",
        ]
    }
}
