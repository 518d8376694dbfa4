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

/// A growing byte array with the JSON primitives the hand-written encoders need (public for the
/// benchmarks' floor server, which writes its rows with it).
public struct JSONBytes: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// A keyset page as the contract writes it: `{"items":[…],"next_cursor":…}`, each item by `write`.
    static func page<Item>(
        _ items: ArraySlice<Item>, nextCursor: String?, bytesPerItem: Int, _ write: (Item, inout JSONBytes) -> Void
    ) -> ByteBuffer {
        var out = JSONBytes(capacity: items.count * bytesPerItem + 64)
        out.openPage()
        for (index, item) in items.enumerated() {
            if index > 0 { out.raw(",") }
            write(item, &out)
        }
        out.closePage(nextCursor: nextCursor)
        return ByteBuffer(bytes: out.bytes)
    }

    /// Opens a keyset page: `{"items":[`, its items to follow, comma-separated.
    mutating func openPage() { raw("{\"items\":[") }

    /// Closes a page `openPage()` opened: the items' `]`, the cursor when another page follows, `}`.
    mutating func closePage(nextCursor: String?) {
        raw("]")
        if let nextCursor {
            raw(",\"next_cursor\":")
            string(nextCursor)
        }
        raw("}")
    }

    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes as they are (already JSON).
    mutating func raw(_ text: UnsafeRawBufferPointer) { bytes.append(contentsOf: text) }

    mutating func raw(_ text: [UInt8]) { bytes.append(contentsOf: text) }

    public mutating func raw(byte: UInt8) { bytes.append(byte) }

    /// Starts over, keeping the capacity.
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    public mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    public mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    /// A number as Foundation's JSONEncoder writes a `Double`: its shortest round-tripping
    /// description without a trailing `.0` (`12000`, `0.1`, `1e+16`).
    mutating func number(_ value: Double) {
        if value.rounded() == value, value.magnitude < 1e15, value != 0 || value.sign == .plus {
            integer(Int64(value))
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func date(_ value: Date) {
        bytes.append(UInt8(ascii: "\""))
        RFC3339DateTranscoder.write(value, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A UUID as a quoted lower-case string, without allocating one.
    public mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { uuid(bytes: $0) }
    }

    /// Bytes as a quoted lower-case hex string.
    mutating func hex(_ raw: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        bytes.append(UInt8(ascii: "\""))
        for byte in raw {
            bytes.append(digits.utf8Start[Int(byte >> 4)])
            bytes.append(digits.utf8Start[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A UUID's 16 bytes as a quoted lower-case string.
    mutating func uuid(bytes raw: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        bytes.append(UInt8(ascii: "\""))
        for (index, byte) in raw.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(digits.utf8Start[Int(byte >> 4)])
            bytes.append(digits.utf8Start[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string, escaped as Foundation's JSONEncoder does with `.withoutEscapingSlashes` (and
    /// PostgreSQL's `escape_json`: the same escapes, `\u00xx` in lower case, non-ASCII as is);
    /// text with nothing to escape is copied in one go.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A JSON string from UTF-8 bytes, escaped as `string(_:)` escapes.
    mutating func string(utf8: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 { escape(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x08: raw("\\b")
        case 0x0C: raw("\\f")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        case 0..<0x20:
            let hexDigits: StaticString = "0123456789abcdef"
            raw("\\u00")
            bytes.append(hexDigits.utf8Start[Int(byte >> 4)])
            bytes.append(hexDigits.utf8Start[Int(byte & 0xF)])
        default: bytes.append(byte)
        }
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
