import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

/// Paging options every list command takes.
struct PageOptions: ParsableArguments {
    @Option(help: "Page size (1–500, default 50).") var limit: Int?
    @Option(help: "The next_cursor of a previous page.") var cursor: String?
}

extension GlobalOptions {
    /// What a held change's answer (202, its approval request) prints.
    static let heldColumns = ["id", "status", "action", "summary", "requested_at", "expires_at"]

    /// The one run-and-print helper of the CLI: calls the service with this command's client,
    /// prints the success body in `layout` and the chosen format, and turns the contract's problem
    /// answer into a failure with its exit code (docs/cli.md).
    ///
    /// Every generated output has one form: a success case (`ok`, `created`) whose payload holds
    /// `body.json`, and `default(statusCode:_:)` holding the problem (`answered`). The answer is
    /// read through that form by reflection, so a command is one call.
    func show<Output>(_ layout: Printer.Layout, _ call: (Client) async throws -> Output) async throws {
        try await runCommand {
            let output = try answered(try await call(try client()))
            guard let answer = Mirror(reflecting: output).children.first,
                let body = Mirror(reflecting: answer.value).descendant("body"),
                let json = Mirror(reflecting: body).children.first?.value as? any Encodable
            else { throw CLIFailure.unexpectedAnswer(output) }
            guard answer.label != "accepted" else {
                // 202: a change policies/approvals.yaml holds for a second person; its approval request
                FileHandle.standardError.write(
                    Data("held for a second person's approval: nothing changes until it is approved\n".utf8))
                return try Printer(format: format).show(json, as: .single(Self.heldColumns))
            }
            try Printer(format: format).show(json, as: layout)
        }
    }
}

/// `output` when the service answered with a success (read it through the generated `ok`,
/// `created` …); the contract's problem answer (`default(statusCode:_:)`) as the failure with its
/// exit code (docs/cli.md). Read by reflection, in this one place, for every operation's output.
func answered<Output>(_ output: Output) throws -> Output {
    guard let answer = Mirror(reflecting: output).children.first, answer.label == "default" else { return output }
    let parts = Mirror(reflecting: answer.value).children.map(\.value)
    guard parts.count == 2, let status = parts[0] as? Int, let problem = parts[1] as? Components.Responses.Problem
    else { throw CLIFailure.unexpectedAnswer(output) }
    throw CLIFailure.from(status, problem)
}

/// The version an update names in If-Match: `ifMatch` as the person gave it, else the record's
/// ETag as `read` answers it now (a change made meanwhile by someone else is still refused: 412).
func currentVersion<Output>(_ ifMatch: String?, _ read: @autoclosure () async throws -> Output) async throws
    -> String?
{
    if let ifMatch { return ifMatch }
    let output = try answered(try await read())
    guard let answer = Mirror(reflecting: output).children.first else { throw CLIFailure.unexpectedAnswer(output) }
    return Mirror(reflecting: answer.value).descendant("headers", "eTag") as? String
}

extension CLIFailure {
    /// An answer outside the contract's form (a bug in the CLI or the service).
    static func unexpectedAnswer(_ output: Any) -> CLIFailure {
        CLIFailure(message: "error: unexpected answer from the service: \(type(of: output))", exitCode: 7)
    }
}
