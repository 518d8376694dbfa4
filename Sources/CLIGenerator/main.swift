import Foundation

/// Writes the CLI's generated commands: `cli-generator CONTRACT OUTPUT`. Run by the `CLICommands`
/// build plugin on every build that changes the contract; a contract it cannot turn into commands
/// fails the build with the operation and field named.
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: cli-generator CONTRACT OUTPUT\n".utf8))
    exit(2)
}
do {
    let contract = try Contract(path: arguments[1])
    let source = try SwiftSource(contract: contract).text
    let output = URL(fileURLWithPath: arguments[2])
    if (try? String(contentsOf: output, encoding: .utf8)) != source {
        try source.write(to: output, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(arguments[1]): \(error)\n".utf8))
    exit(1)
}
