import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Names the operation of an API call in its scope (`RequestScope.operationID`, and the
/// request's `Idempotency-Key`) around every generated handler, so a handler never passes either
/// to the runners by hand.
package struct OperationScopeMiddleware: ServerMiddleware {
    package init() {}

    package static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let key = request.headerFields[Self.idempotencyKey].map { $0.removingPercentEncoding ?? $0 }
        // An operation whose body is optional (`POST …/invitation`, `…/settle`), called without
        // Content-Type, gets none, instead of an empty text read as JSON.
        let path = request.path.map { $0.split(separator: "?", maxSplits: 1).first.map(String.init) ?? $0 } ?? ""
        let sent =
            request.headerFields[.contentType] == nil
                && ContractRoutes.optionalBodies.match(request.method, path) != nil ? nil : body
        guard var scope = RequestScope.current else { return try await next(request, sent, metadata) }
        (scope.operationID, scope.idempotencyKey) = (operationID, key)
        return try await scope.serving { try await next(request, sent, metadata) }
    }
}
