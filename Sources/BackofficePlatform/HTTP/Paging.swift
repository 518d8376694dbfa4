import Foundation

/// Opaque keyset cursors: base64url of a JSON array of the key's parts.
package enum Cursor {
    package static func encode(_ parts: [String]) -> String {
        // Written with the service's own JSON writer: nothing can fail, so no silent fallback.
        var out = JSONBytes(capacity: 64)
        out.raw("[")
        for (index, part) in parts.enumerated() {
            if index > 0 { out.raw(",") }
            out.string(part)
        }
        out.raw("]")
        return Base64URL.encode(Data(out.bytes))
    }

    /// - Throws: 400 `invalid_cursor` when the cursor was not made by `encode` with `count` parts.
    package static func decode(_ cursor: String?, count: Int) throws -> [String]? {
        guard let cursor, !cursor.isEmpty else { return nil }
        guard let data = Base64URL.decode(cursor), let parts = try? JSONDecoder().decode([String].self, from: data),
            parts.count == count
        else {
            throw invalid
        }
        return parts
    }

    /// The id of a one-part cursor (nil without a cursor).
    package static func id(_ cursor: String?) throws -> UUID? {
        try decode(cursor, count: 1).map { parts in
            guard let id = UUID(uuidString: parts[0]) else { throw invalid }
            return id
        }
    }

    /// The number of a one-part cursor (nil without a cursor).
    package static func number(_ cursor: String?) throws -> Int64? {
        try decode(cursor, count: 1).map { parts in
            guard let number = Int64(parts[0]) else { throw invalid }
            return number
        }
    }

    /// The (time, id) keyset of a two-part cursor, time in microseconds (nil without a cursor).
    package static func timeAndID(_ cursor: String?) throws -> (createdAt: Date, id: UUID)? {
        try decode(cursor, count: 2).map { parts in
            guard let micros = Int64(parts[0]), let id = UUID(uuidString: parts[1]) else { throw invalid }
            return (Cursor.time(micros), id)
        }
    }

    /// The (text, id) keyset of a two-part cursor (a sku, a name), nil without a cursor.
    package static func textAndID(_ cursor: String?) throws -> (text: String, id: UUID)? {
        try decode(cursor, count: 2).map { parts in
            guard let id = UUID(uuidString: parts[1]) else { throw invalid }
            return (parts[0], id)
        }
    }

    /// The time of a cursor's microseconds, half a microsecond up: PostgreSQL receives times
    /// truncated to the microsecond, and the binary Date of an exact microsecond can fall just
    /// below it (the keyset would then repeat the row it ends with).
    package static func time(_ micros: Int64) -> Date {
        Date(timeIntervalSince1970: (Double(micros) + 0.5) / 1_000_000)
    }

    /// The parts of a (time, id) keyset, for `keysetPage`.
    package static func timeAndID(_ time: Date, _ id: UUID) -> [String] {
        [String(Int64((time.timeIntervalSince1970 * 1_000_000).rounded())), id.text]
    }

    package static let invalid = Problem(
        status: 400, code: "invalid_cursor", title: "Invalid cursor",
        detail: "Pass back the next_cursor of a previous page unchanged.")
}

/// A row of a list kept newest first by (time, id): challenges and messages by creation, shop
/// applications by submission.
package protocol NewestFirst {
    var listedAt: Date { get }
    var id: UUID { get }
}

/// A page of a newest-first list after `cursor`: `read` is given the keyset to start after and
/// the page size plus one; the page and the next page's cursor (nil on the last page).
/// - Throws: `invalid_cursor` (400) for a cursor no page gave.
package func newestFirstPage<Row: NewestFirst>(
    after cursor: String?, limit: Int, _ read: ((createdAt: Date, id: UUID)?, Int) async throws -> [Row]
) async throws -> (items: ArraySlice<Row>, nextCursor: String?) {
    let rows = try await read(try Cursor.timeAndID(cursor), limit + 1)
    return keysetPage(rows, limit: limit) { Cursor.timeAndID($0.listedAt, $0.id) }
}

/// A page of a list kept in id order after `cursor`: `read` is given the id to start after (the
/// nil UUID, below every other, for the first page) and the page size plus one; the page and the
/// next page's cursor (nil on the last page).
/// - Throws: `invalid_cursor` (400) for a cursor no page gave.
package func idOrderedPage<Row: Identifiable>(
    after cursor: String?, limit: Int, _ read: (UUID, Int) async throws -> [Row]
) async throws -> (items: ArraySlice<Row>, nextCursor: String?) where Row.ID == UUID {
    let rows = try await read(
        try Cursor.id(cursor) ?? UUID(uuid: uuid_t(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), limit + 1)
    return keysetPage(rows, limit: limit) { [$0.id.text] }
}

/// Splits rows fetched with `limit + 1` into the page and the cursor of the next page (nil on
/// the last page); `key` gives the keyset of a row.
package func keysetPage<Row>(_ rows: [Row], limit: Int, key: (Row) -> [String]) -> (
    items: ArraySlice<Row>, nextCursor: String?
) {
    let items = rows.prefix(limit)
    return (items, rows.count > limit ? items.last.map { Cursor.encode(key($0)) } : nil)
}

/// Page size: default 50, 1…`max` (500 unless the operation pages less).
package func pageLimit(_ limit: Int?, max: Int = 500) throws -> Int {
    let value = limit ?? min(50, max)
    guard (1...max).contains(value) else {
        throw Problem.invalid([
            FieldIssue(field: "limit", code: "out_of_range", message: "must be between 1 and \(max)")
        ])
    }
    return value
}
