import BackofficeAPI
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The query string of a list request read by hand (the hand-encoded lists): `limit` (a whole
/// number), `cursor` and `status`; any other item goes to `other`. Refusals are the generated
/// path's (400 `malformed_request` naming the parameter).
struct ListQuery {
    var limit: Int?
    var cursor: String?
    var status: String?

    init(_ query: String?, other: (String, String) throws -> Void) throws {
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
    static func status<S: RawRepresentable & CaseIterable>(_ status: String?, as type: S.Type) throws -> S? where S.RawValue == String {
        guard let status else { return nil }
        guard let parsed = S(rawValue: status) else {
            throw Problem.malformed("status: must be one of \(S.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }
}

/// Serves the hot lists (`GET /v1/customers`, `GET /v1/orders`, a challenge's leaderboard) with
/// their hand-written encoders (`CustomerListJSON`, `OrderPageJSON`, `LeaderboardJSON`) instead of
/// the generated JSON encoding, which cost most of the server's CPU on a 50-row page in our
/// profiles (docs/benchmarks.md), and straight from the edge, before the OpenAPI transport: the
/// page goes out as the one buffer it was written into, without the transport's request and
/// response conversions, body copies and middlewares (about a tenth of the server's CPU per page).
///
/// Everything else about the request is the same path: the edge's request id, deadline,
/// authentication and access log, the operation's policy action and row-level security, the
/// router's HTTP series on `/metrics` under the contract's route, and problem+json for every
/// refusal. Tests hold the bytes, statuses and problem codes equal to the generated path's.
struct HandEncodedLists: Sendable {
    let database: Database
    let policies: PolicySet
    /// The router's HTTP series (`hb_requests` …), recorded for a list the router never sees.
    private let metrics = MetricsMiddleware<AppRequestContext>()

    init(database: Database, policies: PolicySet) {
        (self.database, self.policies) = (database, policies)
    }

    /// A hot list, by the operation the contract gives it.
    enum List: Sendable {
        case customers, orders
        /// A challenge's leaderboard, its id as the path writes it (percent-encoded).
        case leaderboard(challengeID: Substring)

        /// The list a request for `path` (without its query) asks for, when it is a `GET`.
        init?(_ method: HTTPRequest.Method, _ path: String) {
            guard method == .get else { return nil }
            switch path {
            case "/v1/customers": self = .customers
            case "/v1/orders": self = .orders
            default:
                let parts = path.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 5, parts[1] == "v1", parts[2] == "challenges", !parts[3].isEmpty, parts[4] == "leaderboard" else {
                    return nil
                }
                self = .leaderboard(challengeID: parts[3])
            }
        }

        /// The contract's path of the list, as the router labels its series.
        var route: String {
            switch self {
            case .customers: "/v1/customers"
            case .orders: "/v1/orders"
            case .leaderboard: Self.leaderboardRoute
            }
        }
        private static let leaderboardRoute = RouterPath("/v1/challenges/{challenge_id}/leaderboard").description
    }

    /// How the read session of a request plans: generic plans for a hot list (`list` not nil),
    /// whose reads are prepared pages (`ListOrders`, `ListCustomerAccounts`, the leaderboard's)
    /// with one right plan each; PostgreSQL's default for every other read.
    static func plans(_ list: List?) -> PlanMode { list == nil ? .auto : .generic }

    /// Answers `list` for the current request (its `RequestScope`): the page, or its refusal as
    /// problem+json, counted in the router's HTTP series.
    func respond(_ list: List, to request: Request, context: AppRequestContext, logger: Logger) async throws -> Response {
        context.coreContext.endpointPath.value = list.route
        return try await metrics.handle(request, context: context) { request, _ in
            do {
                let body = try await page(list, query: request.uri.query)
                return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
            } catch {
                var logger = logger
                logger[metadataKey: "operation"] = .string(list.route)
                return Problem.answering(error, logger: logger).response(requestID: RequestScope.current?.requestID ?? "")
            }
        }
    }

    private func page(_ list: List, query: String?) async throws -> ByteBuffer {
        let context = try APIHandler(database: database, policies: policies).context()
        switch list {
        case .customers:
            let (items, nextCursor) = try await CustomerListRequest(query: query).run(database, context: context)
            return CustomerListJSON.page(items, nextCursor: nextCursor)
        case .orders:
            return try await OrderListRequest(query: query).json(database, context: context)
        case .leaderboard(let challengeID):
            return LeaderboardJSON.page(try await LeaderboardRequest(challengeID: challengeID, query: query).run(database, context: context))
        }
    }
}
