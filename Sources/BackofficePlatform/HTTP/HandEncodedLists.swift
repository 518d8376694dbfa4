import BackofficeAPI
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The query string of a list request read by hand (the hand-encoded lists): `limit` (a whole
/// number), `cursor` and `status`; any other item goes to `other`. Refusals are the generated
/// path's (400 `malformed_request` naming the parameter).
package struct ListQuery {
    package var limit: Int?
    package var cursor: String?
    package var status: String?

    package init(_ query: String?, other: (String, String) throws -> Void) throws {
        for item in URLComponents(string: "?" + (query ?? ""))?.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "limit":
                guard let number = Int(value) else { throw Problem.malformed("limit: must be a whole number") }
                limit = number
            case "cursor": cursor = value
            case "status": status = value
            default: try other(item.name, value)
            }
        }
    }

    /// `status` as one of `S`'s cases (nil when absent).
    package static func status<S: RawRepresentable & CaseIterable>(_ status: String?, as type: S.Type) throws -> S?
    where S.RawValue == String {
        guard let status else { return nil }
        guard let parsed = S(rawValue: status) else {
            throw Problem.malformed("status: must be one of \(S.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }
}

/// A list a domain serves with its own hand-written encoder, straight from the edge (see
/// `HandEncodedLists`): the contract's route it answers (`{name}` segments match any one
/// non-empty segment) and how its page is written. A domain declares its hot list beside its
/// list request (`HotList.customers` in `CustomerList.swift`); the server registers it.
package struct HotList: Sendable {
    /// The contract's path of the list, as the router labels its series.
    package let route: String
    /// The contract's path, segment by segment.
    private let pattern: [Substring]
    /// The path's text before its first `{…}` segment (all of it when it has none): a path that
    /// does not start so is not this list's, found without splitting it.
    private let prefix: String
    /// How the read session of a request with this query string plans: `.generic` for a
    /// prepared page with one right plan (the default), `.auto` for a read whose parameters
    /// change its best plan (a filtered page).
    package let plans: @Sendable (_ query: String?) -> PlanMode
    /// The page for the request: the path's `{…}` segments in order (as the path writes them,
    /// percent-encoded), the query string, and the request's operation context.
    package let page:
        @Sendable (_ pathSegments: [Substring], _ query: String?, Database, OperationContext) async throws -> HotPage

    package init(
        route: String, plans: PlanMode = .generic,
        page:
            @escaping @Sendable (_ pathSegments: [Substring], _ query: String?, Database, OperationContext) async throws
            -> HotPage
    ) {
        self.init(route: route, plansFor: { _ in plans }, page: page)
    }

    /// A hot list whose plans depend on the request's query string (`plansFor`).
    package init(
        route: String, plansFor: @escaping @Sendable (_ query: String?) -> PlanMode,
        page:
            @escaping @Sendable (_ pathSegments: [Substring], _ query: String?, Database, OperationContext) async throws
            -> HotPage
    ) {
        (self.route, self.pattern, self.plans, self.page) = (
            RouterPath(route).description, route.split(separator: "/", omittingEmptySubsequences: false), plansFor,
            page
        )
        prefix = String(route.prefix { $0 != "{" })
    }

    /// The path's `{…}` segments when `path` is this list's route; nil otherwise.
    package func match(_ path: String) -> [Substring]? {
        guard path.hasPrefix(prefix) else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == pattern.count else { return nil }
        var captured: [Substring] = []
        for (part, expected) in zip(parts, pattern) {
            if expected.hasPrefix("{") {
                guard !part.isEmpty else { return nil }
                captured.append(part)
            } else if part != expected {
                return nil
            }
        }
        return captured
    }
}

/// A hot list's answer: its entity tag, when the list has one (an unchanged page is then 304, its
/// body never written: `write` runs only for a 200), and its page.
package struct HotPage: Sendable {
    package let etag: String?
    package let write: @Sendable () -> ByteBuffer

    /// A page with no entity tag.
    package init(_ body: ByteBuffer) {
        etag = nil
        write = { @Sendable in body }
    }

    /// A page tagged `etag`, written by `write` only when the client does not hold it.
    package init(etag: String, write: @escaping @Sendable () -> ByteBuffer) { (self.etag, self.write) = (etag, write) }
}

/// Serves the hot lists (the domains' `HotList`s: customers, orders, a challenge's leaderboard, the
/// app's published articles, a customer's recommendations and the barcode scan) with their
/// hand-written encoders instead of the generated JSON encoding, which cost most of the server's
/// CPU on a 50-row page in our
/// profiles (docs/benchmarks.md), and straight from the edge, before the OpenAPI transport: the
/// page goes out as the one buffer it was written into, without the transport's request and
/// response conversions, body copies and middlewares (about a tenth of the server's CPU per page).
/// The lists are the domains' (`HotList`), registered by the server.
///
/// Everything else about the request is the same path: the edge's request id, deadline,
/// authentication and access log, the operation's policy action and row-level security, the
/// router's HTTP series on `/metrics` under the contract's route, and problem+json for every
/// refusal. Tests hold the bytes, statuses and problem codes equal to the generated path's.
package struct HandEncodedLists: Sendable {
    package let database: Database
    package let policies: PolicySet
    package let lists: [HotList]
    /// Whether the lists are answered here; false: the generated path answers them too (the
    /// reference tests compare with), read with the same plans.
    package let answers: Bool
    /// The router's HTTP series (`hb_requests` …), recorded for a list the router never sees.
    private let metrics = MetricsMiddleware<AppRequestContext>()

    package init(database: Database, policies: PolicySet, lists: [HotList], answers: Bool = true) {
        (self.database, self.policies, self.lists, self.answers) = (database, policies, lists, answers)
    }

    /// A registered hot list and the path segments a request for it names.
    package struct List: Sendable {
        package let list: HotList
        package let pathSegments: [Substring]
        package var route: String { list.route }
    }

    /// The list a request for `path` (without its query) asks for, when it is a `GET`.
    package func list(_ method: HTTPRequest.Method, _ path: String) -> List? { lists.find(method, path) }

    /// How the read session of a request plans: a hot list's own (`HotList.plans`: generic for the
    /// prepared pages, `ListOrders`, `ListCustomerAccounts`, the leaderboard's, with one right plan
    /// each); PostgreSQL's default for every other read.
    package static func plans(_ list: List?, query: String?) -> PlanMode { list?.list.plans(query) ?? .auto }

    /// Answers `list` for the request (its `context.scope`, authenticated): the page (304 with no
    /// body when `If-None-Match` names its entity tag), or its refusal as problem+json, counted in the
    /// router's HTTP series.
    package func respond(_ list: List, to request: Request, context: AppRequestContext, logger: Logger) async throws
        -> Response
    {
        context.coreContext.endpointPath.value = list.route
        return try await metrics.handle(request, context: context) { request, _ in
            do {
                let operation = try OperationContext(context.scope, policies: policies)
                let page = try await list.list.page(list.pathSegments, request.uri.query, database, operation)
                guard let etag = page.etag else {
                    return Response(
                        status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: page.write()))
                }
                if EntityTag.matches(request.headers[.ifNoneMatch], etag) {
                    return Response(status: .notModified, headers: [.eTag: etag])
                }
                return Response(
                    status: .ok, headers: [.contentType: "application/json; charset=utf-8", .eTag: etag],
                    body: .init(byteBuffer: page.write()))
            } catch {
                var logger = logger
                logger[metadataKey: "operation"] = .string(list.route)
                return Problem.answering(error, logger: logger).response(
                    requestID: context.scope.requestID)
            }
        }
    }
}

extension [HotList] {
    /// The list among these that a request for `path` (without its query) asks for, when it is a `GET`.
    package func find(_ method: HTTPRequest.Method, _ path: String) -> HandEncodedLists.List? {
        guard method == .get else { return nil }
        for list in self {
            if let segments = list.match(path) { return HandEncodedLists.List(list: list, pathSegments: segments) }
        }
        return nil
    }
}
