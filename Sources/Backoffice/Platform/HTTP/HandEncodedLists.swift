import BackofficeAPI
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime

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
/// their hand-written encoders (`CustomerListJSON`, `OrderPageJSON`, `LeaderboardJSON`) instead of the generated JSON encoding, which cost most of
/// the server's CPU on a 50-row page in our profiles (README, "Benchmarks"). Everything else
/// about the request — authentication, policy, row-level security, problem+json — is the same
/// path; tests hold the bytes equal to the generated encoder's.
struct HandEncodedLists: ServerMiddleware {
    let database: Database
    let policies: PolicySet

    /// How the read session of a request for `path` plans: generic plans for these lists, whose
    /// reads are prepared pages (`ListOrders`, `ListCustomerAccounts`) with one right plan each.
    static func plans(_ path: String) -> PlanMode {
        path == "/v1/customers" || path == "/v1/orders" || (path.hasPrefix("/v1/challenges/") && path.hasSuffix("/leaderboard")) ? .generic : .auto
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard
            operationID == Operations.ListCustomers.id || operationID == Operations.ListOrders.id || operationID == Operations.ChallengeLeaderboard.id
        else {
            return try await next(request, body, metadata)
        }
        let query = request.path.flatMap { path in path.firstIndex(of: "?").map { String(path[path.index(after: $0)...]) } }
        let page: ByteBuffer
        switch operationID {
        case Operations.ListCustomers.id:
            let (items, nextCursor) = try await CustomerListRequest(query: query).run(database, context: try context())
            page = CustomerListJSON.page(items, nextCursor: nextCursor)
        case Operations.ListOrders.id:
            page = try await OrderListRequest(query: query).json(database, context: try context())
        case Operations.ChallengeLeaderboard.id:
            page = LeaderboardJSON.page(try await LeaderboardRequest(path: request.path ?? "").run(database, context: try context()))
        default: return try await next(request, body, metadata)  // not reached: guarded above
        }
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        return (HTTPResponse(status: .ok, headerFields: fields), HTTPBody(page.readableBytesView))
    }

    private func context() throws -> OperationContext { try APIHandler(database: database, policies: policies).context() }
}
