import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

/// A failed command: a message for stderr and the documented exit code (docs/cli.md):
/// 0 ok, 64 usage, 3 not found, 4 unauthenticated or forbidden, 5 conflict (state, version,
/// idempotency), 6 rejected input, 7 service unavailable, 8 audit verification failed.
struct CLIFailure: Error, CustomStringConvertible {
    let message: String
    let exitCode: Int32

    var description: String { message }

    static func usage(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 64) }

    /// The exit code for an HTTP status.
    static func exitCode(forStatus status: Int) -> Int32 {
        switch status {
        case 401, 403: 4
        case 404: 3
        case 409, 412, 428: 5
        case 400, 402, 413, 415, 422: 6
        default: 7
        }
    }

    /// A problem+json answer, printed readably.
    static func problem(_ status: Int, _ problem: Components.Schemas.Problem?) -> CLIFailure {
        guard let problem else {
            return CLIFailure(
                message: "error: the service answered HTTP \(status)", exitCode: exitCode(forStatus: status))
        }
        var lines = ["error: \(problem.title) (\(problem.code), HTTP \(status))"]
        if let detail = problem.detail { lines.append("  \(detail)") }
        if let state = problem.currentState { lines.append("  current state: \(state)") }
        for issue in problem.errors ?? [] { lines.append("  - \(issue.field): \(issue.message) [\(issue.code)]") }
        if let id = problem.requestId { lines.append("  request id: \(id)") }
        return CLIFailure(message: lines.joined(separator: "\n"), exitCode: exitCode(forStatus: status))
    }

    static func from(_ status: Int, _ body: Components.Responses.Problem) -> CLIFailure {
        problem(status, try? body.body.applicationProblemJson)
    }

}

/// Runs a command body, mapping failures to exit codes and readable messages.
func runCommand(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let failure as CLIFailure {
        FileHandle.standardError.write(Data((failure.message + "\n").utf8))
        throw ExitCode(failure.exitCode)
    } catch let exit as ExitCode {
        throw exit
    } catch let error as ValidationError {
        throw error
    } catch let error as ClientError {
        FileHandle.standardError.write(
            Data(
                """
                error: cannot reach the service at \(error.baseURL?.absoluteString ?? "its URL"): \
                \(error.underlyingError)\n
                """
                .utf8))
        throw ExitCode(7)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        throw ExitCode(7)
    }
}
