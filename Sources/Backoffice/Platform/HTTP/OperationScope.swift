import Foundation
import HTTPTypes
import OpenAPIRuntime

/// What the contract's router knows about the operation a generated handler runs: its
/// operation id and the request's `Idempotency-Key`. `OperationScopeMiddleware` sets it around
/// every generated handler, so a handler never passes either to the runners by hand.
struct OperationScope: Sendable {
    /// The contract's `operationId` (`lockCustomer`): with the request, what a key is fingerprinted with.
    let operationID: String
    /// The `Idempotency-Key` header as the generated code reads it (percent-decoded), if sent.
    let idempotencyKey: String?

    @TaskLocal static var current: OperationScope?
}

/// Sets `OperationScope.current` for the generated handler it wraps.
struct OperationScopeMiddleware: ServerMiddleware {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    func intercept(
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
        return try await OperationScope.$current.withValue(
            OperationScope(operationID: operationID, idempotencyKey: key)
        ) {
            try await next(request, sent, metadata)
        }
    }
}
