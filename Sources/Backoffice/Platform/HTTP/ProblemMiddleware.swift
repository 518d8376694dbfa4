import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

/// Turns every error of a generated handler into problem+json: our `Problem`s as they are,
/// request decoding failures (malformed JSON, missing or unknown fields, bad parameters) as 400
/// `malformed_request` naming the cause, anything else as a logged 500 that reveals nothing.
struct ProblemMiddleware: ServerMiddleware {
    let logger: Logger

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        do {
            return try await next(request, body, metadata)
        } catch {
            let problem = Self.problem(for: error, logger: logger)
            var fields = HTTPFields()
            fields[.contentType] = "application/problem+json"
            return (
                HTTPResponse(status: .init(code: problem.status), headerFields: fields),
                HTTPBody(problem.body(requestID: RequestScope.current?.requestID))
            )
        }
    }

    static func problem(for error: any Error, logger: Logger) -> Problem {
        if let problem = error as? Problem { return problem }
        guard let serverError = error as? ServerError else {
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
        if let problem = serverError.underlyingError as? Problem { return problem }
        if serverError.underlyingError is DecodingError || (400..<500).contains(serverError.httpStatus.code) {
            return .malformed("\(serverError.causeDescription): \(describe(serverError.underlyingError))")
        }
        logger.error("unhandled error", metadata: ["operation": "\(serverError.operationID)", "error": "\(String(reflecting: serverError.underlyingError))"])
        return .internalError
    }

    /// A readable account of a decoding failure: which field and what was wrong.
    static func describe(_ error: any Error) -> String {
        let found = (error as? DecodingError) ?? Mirror(reflecting: error).children.lazy.compactMap { $0.value as? DecodingError }.first
        guard let decoding = found else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? "body" : p
        }
        switch decoding {
        case .keyNotFound(let key, let context): return "\(path(context)).\(key.stringValue): is required".replacingOccurrences(of: "body.", with: "")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default: return String(describing: decoding)
        }
    }
}
