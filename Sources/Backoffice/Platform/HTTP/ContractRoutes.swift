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
///   authenticates the token again (`APIHandler.changeAfterUpload`).
struct ContractRoutes: Sendable {
    struct Route: Sendable {
        let method: HTTPRequest.Method
        /// The path template's segments; `nil` for a `{parameter}`.
        let segments: [String?]
        let rateLimited: Bool
    }

    let routes: [Route]

    /// The public operations of the bundled `openapi.yaml`.
    static let publicOperations = ContractRoutes(document: bundled, marker: "x-public")
    /// The lag-tolerant reads of the bundled `openapi.yaml`.
    static let lagTolerantReads = ContractRoutes(document: bundled, marker: "x-read-replica")
    /// The staged changes of the bundled `openapi.yaml` (they call the payment provider).
    static let stagedChanges = ContractRoutes(document: bundled, marker: "x-staged")
    /// The uploads read as they arrive (`StreamedBody`).
    static let streamedBodies = ContractRoutes(document: bundled, marker: "x-streamed-body")
    private static var bundled: String { OpenAPIDocument.yaml.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    init(document: String, marker: String) {
        var routes: [Route] = []
        let paths = ((try? Yams.load(yaml: document)) as? [String: Any])?["paths"] as? [String: Any] ?? [:]
        for (path, item) in paths {
            for (method, raw) in item as? [String: Any] ?? [:] {
                guard let operation = raw as? [String: Any], operation[marker] as? Bool == true,
                    let method = HTTPRequest.Method(method.uppercased())
                else { continue }
                let segments = path.split(separator: "/").map { $0.hasPrefix("{") ? nil : String($0) }
                routes.append(Route(method: method, segments: segments, rateLimited: operation["x-rate-limited"] as? Bool == true))
            }
        }
        self.routes = routes
    }

    /// The marked route `method` and `path` call, nil when the operation is not marked.
    func match(_ method: HTTPRequest.Method, _ path: String) -> Route? {
        guard routes.contains(where: { $0.method == method }) else { return nil }  // a read splits nothing
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return routes.first { route in
            route.method == method && route.segments.count == parts.count
                && zip(route.segments, parts).allSatisfy { segment, part in segment.map { $0 == part } ?? !part.isEmpty }
        }
    }
}
