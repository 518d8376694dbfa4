import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends `ETag` as written (`"3"`): the generated code percent-encodes header values, which
/// would turn the quotes of an entity tag into `%22`.
package struct ETagMiddleware: ServerMiddleware {
    package init() {}

    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var (response, body) = try await next(request, body, metadata)
        if let tag = response.headerFields[.eTag], let decoded = tag.removingPercentEncoding {
            response.headerFields[.eTag] = decoded
        }
        return (response, body)
    }
}
