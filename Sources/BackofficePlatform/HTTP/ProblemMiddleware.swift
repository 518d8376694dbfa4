import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

/// Turns every error of a generated handler into problem+json: `Problem`s and `DomainError`s,
/// request decoding failures (malformed JSON, missing or unknown fields, bad parameters) as 400
/// `malformed_request` naming the cause, anything else as a logged 500 that reveals nothing.
package struct ProblemMiddleware: ServerMiddleware {
    package let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        do {
            return try await next(request, body, metadata)
        } catch {
            var logger = logger
            if let requestID = RequestScope.current?.requestID {
                logger[metadataKey: "request_id"] = .string(requestID)
            }
            let problem = Self.problem(for: error, logger: logger)
            var fields = HTTPFields()
            fields[.contentType] = "application/problem+json"
            if let wait = problem.retryAfter { fields[.retryAfter] = String(wait) }
            if let scheme = problem.wwwAuthenticate { fields[.wwwAuthenticate] = scheme }
            return (
                HTTPResponse(status: .init(code: problem.status), headerFields: fields),
                HTTPBody(problem.body(requestID: RequestScope.current?.requestID))
            )
        }
    }

    package static func problem(for error: any Error, logger: Logger) -> Problem {
        if let problem = Problem.describing(error) { return problem }
        guard let serverError = error as? ServerError else {
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
        if let problem = Problem.describing(serverError.underlyingError) { return problem }
        if serverError.underlyingError is DecodingError || (400..<500).contains(serverError.httpStatus.code) {
            guard let issue = fieldIssue(serverError.underlyingError) else {
                return .malformed(serverError.causeDescription)
            }
            var problem = Problem.malformed("\(issue.field): \(issue.message)")
            problem.errors = [issue]
            return problem
        }
        logger.error(
            "unhandled error",
            metadata: [
                "operation": "\(serverError.operationID)",
                "error": "\(String(reflecting: serverError.underlyingError))",
            ])
        return .internalError
    }

    /// Which field a decoding failure is about, and what was wrong with it.
    package static func fieldIssue(_ error: any Error) -> FieldIssue? {
        let found =
            (error as? DecodingError)
            ?? Mirror(reflecting: error).children.lazy.compactMap { $0.value as? DecodingError }.first
        guard let decoding = found else { return nil }
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (last.map { [$0] } ?? [])
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "body" : text
        }
        switch decoding {
        case .keyNotFound(let key, let context):
            return FieldIssue(field: path(context, key), code: "required", message: "is required")
        case .typeMismatch(let type, let context):
            return FieldIssue(field: path(context), code: "invalid_type", message: "must be \(type)")
        case .valueNotFound(_, let context):
            return FieldIssue(field: path(context), code: "required", message: "must not be null")
        case .dataCorrupted(let context):
            if context.debugDescription.contains("Additional properties") {
                return FieldIssue(field: path(context), code: "unknown_field", message: "is not a known field")
            }
            return FieldIssue(field: path(context), code: "invalid_value", message: context.debugDescription)
        @unknown default:
            return nil
        }
    }
}
