import BackofficePlatform
import Crypto
import Foundation
import NIOCore
import PostgresNIO

/// Builds an audit event's canonical bytes from its stored columns, byte for byte as PostgreSQL's
/// `audit_canonical` builds them when the event is appended: the text form of a jsonb object
/// (keys ordered by length, then by bytes; `", "` between members and `": "` after keys; JSON string
/// escapes with `\u00xx` in lower case; non-ASCII as is), `occurred_at` in UTC with microseconds,
/// `before` and `after` as their own jsonb text, `token_id` and `session_id` only when present.
///
/// Verification recomputes the bytes here instead of asking the database to (the SQL function
/// built each event's jsonb and was most of the time `audit verify` took). The columns come in
/// PostgreSQL's binary format, in the order of `AuditCanonical.Column`, as raw bytes that are
/// only read while `build` runs.
package struct AuditCanonical: Sendable {
    /// The columns a canonical text is built from, in the order a query selects them
    /// (`AuditCanonical.selectList`).
    package enum Column: Int, CaseIterable, Sendable {
        case chain, seq, tenantID, occurredAt, actorID, actorRole, action, targetType, targetID, requestID, sourceIP,
            reason, before,
            after, policyDigest, tokenID, sessionID

        /// The member's key in the canonical object, which is also the column's name.
        var key: String {
            switch self {
            case .chain: "chain"
            case .seq: "seq"
            case .tenantID: "tenant_id"
            case .occurredAt: "occurred_at"
            case .actorID: "actor_id"
            case .actorRole: "actor_role"
            case .action: "action"
            case .targetType: "target_type"
            case .targetID: "target_id"
            case .requestID: "request_id"
            case .sourceIP: "source_ip"
            case .reason: "reason"
            case .before: "before"
            case .after: "after"
            case .policyDigest: "policy_digest"
            case .tokenID: "token_id"
            case .sessionID: "session_id"
            }
        }

        /// Whether a canonical text leaves the column out when it is NULL (the credential columns:
        /// events made before they existed keep their bytes).
        var omittedWhenAbsent: Bool { self == .tokenID || self == .sessionID }
    }

    /// The columns, comma-separated, in `Column` order.
    package static let selectList = Column.allCases.map(\.key).joined(separator: ", ")

    /// The members in jsonb's order.
    static let members: [(member: Column, key: [UInt8])] = inJSONBOrder(Column.allCases, key: \.key)

    /// A member of an export line (`audit export`): the canonical's columns (a NULL one left out, as the
    /// contract's `AuditEvent` leaves it out), and the event's id, links and canonical text.
    enum ExportMember: Equatable {
        case column(Column), id, prevHash, hash, canonical

        var key: String {
            switch self {
            case .column(let column): column.key
            case .id: "id"
            case .prevHash: "prev_hash"
            case .hash: "hash"
            case .canonical: "canonical"
            }
        }
    }

    /// An export line's members in jsonb's order.
    static let exportMembers: [(member: ExportMember, key: [UInt8])] = inJSONBOrder(
        Column.allCases.map(ExportMember.column) + [.id, .prevHash, .hash, .canonical], key: \.key)

    /// Members with their written keys (`"key": `), in the order jsonb keeps an object's keys:
    /// shorter keys first, equal lengths by bytes.
    private static func inJSONBOrder<Member>(_ members: [Member], key: (Member) -> String) -> [(
        member: Member, key: [UInt8]
    )] {
        members.map { (member: $0, key: Array(key($0).utf8)) }
            .sorted {
                $0.key.count != $1.key.count ? $0.key.count < $1.key.count : $0.key.lexicographicallyPrecedes($1.key)
            }
            .map { (member: $0.member, key: Array("\"".utf8) + $0.key + Array("\": ".utf8)) }
    }

    private var out = JSONBytes(capacity: 1024)

    /// The last text built.
    package var bytes: [UInt8] { out.bytes }

    package init() {}

    /// Builds the canonical text of one event from its columns' binary values (`nil` is SQL NULL),
    /// `cells[offset + column.rawValue]` for each column; returns false when a value is malformed.
    package mutating func build(_ cells: [UnsafeRawBufferPointer?], offset: Int = 0) -> Bool {
        out.removeAll()
        out.raw("{")
        var first = true
        for (column, key) in Self.members {
            let cell = cells[offset + column.rawValue]
            if column.omittedWhenAbsent && cell == nil { continue }
            if !first { out.raw(", ") }
            first = false
            out.raw(key)
            guard write(column, cell) else { return false }
        }
        out.raw("}")
        return true
    }

    /// Builds `audit export`'s line for one event (without its newline), byte for byte as jsonb's
    /// text of the object would be, NULL members left out: its id, canonical text and links, and
    /// its columns' binary values as `build` takes them.
    package mutating func buildExportLine(
        id: Int64, canonical: UnsafeRawBufferPointer, prevHash: UnsafeRawBufferPointer, hash: UnsafeRawBufferPointer,
        columns cells: [UnsafeRawBufferPointer?], offset: Int = 0
    ) -> Bool {
        out.removeAll()
        out.raw("{")
        var first = true
        for (member, key) in Self.exportMembers {
            if case .column(let column) = member, cells[offset + column.rawValue] == nil { continue }
            if !first { out.raw(", ") }
            first = false
            out.raw(key)
            switch member {
            case .column(let column): guard write(column, cells[offset + column.rawValue]) else { return false }
            case .id: out.integer(id)
            case .prevHash: out.hex(prevHash)
            case .hash: out.hex(hash)
            case .canonical: out.string(utf8: canonical)
            }
        }
        out.raw("}")
        return true
    }

    /// One column's value as jsonb writes it; false when it is malformed.
    private mutating func write(_ column: Column, _ cell: UnsafeRawBufferPointer?) -> Bool {
        guard let cell else {
            out.raw("null")
            return true
        }
        switch column {
        case .seq:
            guard let value = cell.int64 else { return false }
            out.integer(value)
        case .tenantID, .actorID, .tokenID, .sessionID:
            guard cell.count == 16 else { return false }
            out.uuid(bytes: cell)
        case .occurredAt:
            guard let micros = cell.int64, appendTimestamp(microsecondsSince2000: micros) else { return false }
        case .before, .after:
            // jsonb's binary form is a version byte (1) before the text form.
            guard cell.first == 1 else { return false }
            out.raw(UnsafeRawBufferPointer(rebasing: cell.dropFirst()))
        default:
            out.string(utf8: cell)
        }
        return true
    }

    /// `to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`, quoted, from the binary
    /// timestamptz (microseconds since 2000-01-01 00:00 UTC).
    /// Years before 1 and after 9999 (never written by `audit_append`) are refused.
    private mutating func appendTimestamp(microsecondsSince2000 micros: Int64) -> Bool {
        let perDay: Int64 = 86_400_000_000
        let (days, inDay) = (micros.floorDivided(by: perDay), micros.floorModulo(perDay))
        let (year, month, day) = UTCDay.civil(daysSince1970: days + 10_957)
        let seconds = inDay / 1_000_000
        guard (1...9999).contains(year) else { return false }
        out.raw("\"")
        appendDigits(year, width: 4)
        out.raw("-")
        appendDigits(month, width: 2)
        out.raw("-")
        appendDigits(day, width: 2)
        out.raw("T")
        appendDigits(seconds / 3600, width: 2)
        out.raw(":")
        appendDigits(seconds / 60 % 60, width: 2)
        out.raw(":")
        appendDigits(seconds % 60, width: 2)
        out.raw(".")
        appendDigits(inDay % 1_000_000, width: 6)
        out.raw("Z\"")
        return true
    }

    /// A non-negative number in decimal, zero-padded to at least `width` digits.
    private mutating func appendDigits<Value: BinaryInteger>(_ value: Value, width: Int) {
        let value = UInt64(value)
        var divisor: UInt64 = 1
        var count = 1
        while count < width || (count < 20 && value / divisor >= 10) {
            divisor *= 10
            count += 1
        }
        while count > 0 {
            out.raw(byte: UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
            count -= 1
        }
    }
}
