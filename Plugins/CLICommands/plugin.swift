import Foundation
import PackagePlugin

/// Generates the CLI's commands from the contract (`Sources/BackofficeAPI/openapi.yaml`'s `x-cli`
/// blocks) before the `backoffice` target compiles: one `CLICommands.swift` in the build folder.
@main
struct CLICommands: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let contract = context.package.directoryURL.appending(path: "Sources/BackofficeAPI/openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "CLICommands.swift")
        return [
            .buildCommand(
                displayName: "Generating the CLI's commands from openapi.yaml",
                executable: try context.tool(named: "CLIGenerator").url,
                arguments: [contract.path(), output.path()],
                inputFiles: [contract], outputFiles: [output])
        ]
    }
}
