import ArgumentParser
import AsyncHTTPClient
import BackofficeAPI
import BackofficePlatform
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// Output formats: a table on a terminal, JSON otherwise.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, jsonl, csv
}

/// Options every API command takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "Service URL (env BACKOFFICE_URL; else the saved login's; default http://127.0.0.1:8080).")
    var url: String?

    @Option(help: "API token (env BACKOFFICE_TOKEN; else the saved login's).")
    var token: String?

    @Option(help: "Output: table, json, jsonl or csv (table on a terminal, json otherwise).")
    var output: OutputFormat?

    @Option(help: "Idempotency-Key for a change (generated when absent; printed with --verbose).")
    var idempotencyKey: String?

    @Option(help: "A login saved by `backoffice login` (env BACKOFFICE_PROFILE; default: the current one).")
    var profile: String?

    @Flag(help: "Print the request id and idempotency key on stderr.")
    var verbose = false

    private var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The saved login in use, if any; flags and environment variables win over it.
    var savedLogin: Profiles.Profile? { Profiles.load().selected(profile ?? environment["BACKOFFICE_PROFILE"]) }

    var serviceURL: String {
        url ?? environment["BACKOFFICE_URL"] ?? savedLogin?.url ?? "http://127.0.0.1:8080"
    }

    var bearer: String? { token ?? environment["BACKOFFICE_TOKEN"] ?? savedLogin?.token }

    var format: OutputFormat { output ?? (isatty(STDOUT_FILENO) == 1 ? .table : .json) }

    /// The key sent with a change: the one given, or a new one.
    func changeKey() -> String {
        let key = idempotencyKey ?? UUID().uuidString.lowercased()
        if verbose { FileHandle.standardError.write(Data("idempotency-key: \(key)\n".utf8)) }
        return key
    }

    /// The generated client, with the bearer token and request-id logging.
    func client() throws -> Client {
        guard let server = URL(string: serviceURL), server.scheme == "http" || server.scheme == "https" else {
            throw CLIFailure.usage("--url must be an http(s) URL, got '\(serviceURL)'")
        }
        return Client(
            serverURL: server, configuration: .init(dateTranscoder: RFC3339DateTranscoder()),
            transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: .seconds(120))),
            middlewares: [HeadersMiddleware(token: bearer, verbose: verbose)])
    }
}

/// One HTTP client for the process: a refused or unreachable service fails within seconds, not
/// after AsyncHTTPClient's default connect retries.
let httpClient = HTTPClient(
    eventLoopGroupProvider: .singleton,
    configuration: HTTPClient.Configuration(timeout: .init(connect: .seconds(3), read: .seconds(120))))

/// Adds the bearer token; with --verbose, prints the request id the service answered with.
struct HeadersMiddleware: ClientMiddleware {
    let token: String?
    let verbose: Bool

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        let (response, responseBody) = try await next(request, body, baseURL)
        if verbose, let id = response.headerFields[HTTPField.Name("X-Request-Id")!] {
            FileHandle.standardError.write(Data("request-id: \(id)\n".utf8))
        }
        return (response, responseBody)
    }
}
