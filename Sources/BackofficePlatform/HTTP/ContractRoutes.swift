import BackofficeAPI
import Foundation
import HTTPTypes
import Yams

/// The operations the contract marks with an extension, matched by method and path before the
/// router runs:
/// - `x-public: true` — anyone may call them without a token (the shop application form, the
///   payment provider's webhooks); `x-rate-limited: true` puts one under the per-address
///   submission limit of `policies/security.yaml`;
/// - `x-read-replica: true` — lag-tolerant reads (lists, exports, the catalog, leaderboards, the
///   audit list) that may be answered by the read replica;
/// - `x-staged: true` — changes the edge holds no transaction for, each step running in a
///   transaction of its own: those that call the payment provider (`StagedOperation`), and the
///   payment webhooks, whose signature is verified before any database work;
/// - `x-streamed-body: true` — uploads the handler reads as they arrive (the goods import): the
///   edge never buffers their body; it holds no transaction for them either (as for `x-staged`),
///   so a slow upload holds no connection; once the body is read, the change's transaction
///   authenticates the token again (`APIHandler.changeAfterUpload`);
/// - a `requestBody` with `required: false` — a request without Content-Type sends none
///   (`OperationScopeMiddleware`), rather than an empty text read as JSON.
package struct ContractRoutes: Sendable {
    package struct Route: Sendable {
        package let method: HTTPRequest.Method
        /// The path template's segments; `nil` for a `{parameter}`.
        package let segments: [String?]
        package let rateLimited: Bool
    }

    package let routes: [Route]

    /// The public operations of the bundled `openapi.yaml`.
    package static let publicOperations = ContractRoutes(bundled, marker: "x-public")
    /// The lag-tolerant reads of the bundled `openapi.yaml`.
    package static let lagTolerantReads = ContractRoutes(bundled, marker: "x-read-replica")
    /// The staged changes of the bundled `openapi.yaml` (they call the payment provider).
    package static let stagedChanges = ContractRoutes(bundled, marker: "x-staged")
    /// The uploads read as they arrive (`StreamedBody`).
    package static let streamedBodies = ContractRoutes(bundled, marker: "x-streamed-body")
    /// The operations whose request body is optional (`requestBody.required: false`).
    package static let optionalBodies = ContractRoutes(bundled, marker: optionalBody)
    package static let optionalBody = "requestBody.required: false"

    /// One operation of a contract with the extensions it is marked with (`x-…: true`).
    package struct Operation: Sendable {
        package let route: Route
        package let markers: Set<String>
    }

    /// The operations of the bundled `openapi.yaml`, parsed once for every marker. The document
    /// is part of the build: one that does not parse is a broken build, and stops the process.
    private static let bundled: [Operation] = {
        guard let yaml = OpenAPIDocument.yaml,
            let operations = try? operations(in: String(decoding: yaml, as: UTF8.self))
        else {
            preconditionFailure("the bundled openapi.yaml does not parse")
        }
        return operations
    }()

    /// The operations of `document` with their markers.
    package static func operations(in document: String) throws -> [Operation] {
        guard let paths = (try Yams.load(yaml: document) as? [String: Any])?["paths"] as? [String: Any] else {
            return []
        }
        var operations: [Operation] = []
        for (path, item) in paths {
            for (method, raw) in item as? [String: Any] ?? [:] {
                guard let operation = raw as? [String: Any], let method = HTTPRequest.Method(method.uppercased()) else {
                    continue
                }
                let segments = path.split(separator: "/").map { $0.hasPrefix("{") ? nil : String($0) }
                var markers = Set(
                    operation.compactMap { key, value in key.hasPrefix("x-") && value as? Bool == true ? key : nil })
                if (operation["requestBody"] as? [String: Any])?["required"] as? Bool == false {
                    markers.insert(optionalBody)
                }
                operations.append(
                    Operation(
                        route: Route(
                            method: method, segments: segments, rateLimited: markers.contains("x-rate-limited")),
                        markers: markers))
            }
        }
        return operations
    }

    /// The routes of the operations marked with `marker`.
    package init(_ operations: [Operation], marker: String) {
        routes = operations.filter { $0.markers.contains(marker) }.map(\.route)
    }

    /// The marked route `method` and `path` call, nil when the operation is not marked.
    package func match(_ method: HTTPRequest.Method, _ path: String) -> Route? {
        guard routes.contains(where: { $0.method == method }) else { return nil }  // a read splits nothing
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return routes.first { route in
            route.method == method && route.segments.count == parts.count
                && zip(route.segments, parts).allSatisfy { segment, part in segment.map { $0 == part } ?? !part.isEmpty
                }
        }
    }
}
