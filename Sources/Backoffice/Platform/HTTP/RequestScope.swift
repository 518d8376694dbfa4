import Foundation
import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the peer address (recorded as the
/// audit event's source ip).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// What the edge learned about the request, handed to the generated handlers through a task
/// local (the OpenAPI transport passes only path parameters to them).
public struct RequestScope: Sendable {
    public let principal: Principal?
    public let requestID: String
    public let sourceIP: String?
    /// The request's transaction, acting for `principal` (nil outside `/v1`).
    public var transaction: RequestTransaction? = nil
    /// The body as received, for a public operation that verifies a signature over it (webhooks).
    public var rawBody: [UInt8]? = nil
    /// The SHA-256 of the bearer token the request authenticated with.
    public var tokenHash: [UInt8]? = nil

    @TaskLocal public static var current: RequestScope?
}

/// `X-Request-Id`: accepted when it is 1–128 characters of `[A-Za-z0-9._:-]`; anything else is
/// replaced by a new id (never stored or logged as sent).
enum RequestID {
    static func accept(_ header: String?) -> String {
        if let header, (1...128).contains(header.utf8.count), header.utf8.allSatisfy(isAllowed) { return header }
        return UUID().uuidString.lowercased()
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"): true
        default: false
        }
    }
}

/// Base64url without padding (RFC 4648 §5), as cursors and token secrets are written.
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        var bytes = Array(data.base64EncodedData())
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Opaque keyset cursors: base64url of a JSON array of the key's parts.
public enum Cursor {
    public static func encode(_ parts: [String]) -> String {
        Base64URL.encode((try? JSONEncoder().encode(parts)) ?? Data())
    }

    /// - Throws: 400 `invalid_cursor` when the cursor was not made by `encode` with `count` parts.
    public static func decode(_ cursor: String?, count: Int) throws -> [String]? {
        guard let cursor, !cursor.isEmpty else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let parts = try? JSONDecoder().decode([String].self, from: data), parts.count == count else {
            throw invalid
        }
        return parts
    }

    /// The id of a one-part cursor (nil without a cursor).
    public static func id(_ cursor: String?) throws -> UUID? {
        try decode(cursor, count: 1).map { parts in
            guard let id = UUID(uuidString: parts[0]) else { throw invalid }
            return id
        }
    }

    /// The number of a one-part cursor (nil without a cursor).
    public static func number(_ cursor: String?) throws -> Int64? {
        try decode(cursor, count: 1).map { parts in
            guard let number = Int64(parts[0]) else { throw invalid }
            return number
        }
    }

    /// The (time, id) keyset of a two-part cursor, time in microseconds (nil without a cursor).
    public static func timeAndID(_ cursor: String?) throws -> (createdAt: Date, id: UUID)? {
        try decode(cursor, count: 2).map { parts in
            guard let micros = Int64(parts[0]), let id = UUID(uuidString: parts[1]) else { throw invalid }
            return (Cursor.time(micros), id)
        }
    }

    /// The (text, id) keyset of a two-part cursor (a sku, a name), nil without a cursor.
    public static func textAndID(_ cursor: String?) throws -> (text: String, id: UUID)? {
        try decode(cursor, count: 2).map { parts in
            guard let id = UUID(uuidString: parts[1]) else { throw invalid }
            return (parts[0], id)
        }
    }

    /// The time of a cursor's microseconds, half a microsecond up: PostgreSQL receives times
    /// truncated to the microsecond, and the binary Date of an exact microsecond can fall just
    /// below it (the keyset would then repeat the row it ends with).
    static func time(_ micros: Int64) -> Date { Date(timeIntervalSince1970: (Double(micros) + 0.5) / 1_000_000) }

    /// The parts of a (time, id) keyset, for `keysetPage`.
    public static func timeAndID(_ time: Date, _ id: UUID) -> [String] {
        [String(Int64((time.timeIntervalSince1970 * 1_000_000).rounded())), id.uuidString.lowercased()]
    }

    static let invalid = Problem(
        status: 400, code: "invalid_cursor", title: "Invalid cursor", detail: "Pass back the next_cursor of a previous page unchanged.")
}

/// Splits rows fetched with `limit + 1` into the page and the cursor of the next page (nil on
/// the last page); `key` gives the keyset of a row.
func keysetPage<Row>(_ rows: [Row], limit: Int, key: (Row) -> [String]) -> (items: ArraySlice<Row>, nextCursor: String?) {
    let items = rows.prefix(limit)
    return (items, rows.count > limit ? items.last.map { Cursor.encode(key($0)) } : nil)
}

/// Entity tags of versioned resources (`"3"` for version 3) and the If-Match check.
enum EntityTag {
    static func of(_ version: Int64) -> String { "\"\(version)\"" }

    /// Throws 412 unless `ifMatch`, when sent, names `version` (quoted, bare or weak) or is `*`.
    static func check(_ ifMatch: String?, version: Int64) throws {
        guard let ifMatch else { return }
        let tag = ifMatch.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "")
        if tag != "*" && tag != of(version) && tag != String(version) { throw Problem.preconditionFailed(current: of(version)) }
    }
}

/// Page size: default 50, 1…500.
public func pageLimit(_ limit: Int?) throws -> Int {
    let value = limit ?? 50
    guard (1...500).contains(value) else {
        throw Problem.invalid([FieldIssue(field: "limit", code: "out_of_range", message: "must be between 1 and 500")])
    }
    return value
}
