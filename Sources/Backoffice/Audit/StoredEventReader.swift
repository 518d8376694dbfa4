import Crypto
import Foundation
import NIOCore
import PostgresNIO
import BackofficePlatform

/// Reads stored audit events into what the chain verifier needs, recomputing each event's
/// canonical bytes from its columns and its hash from its link on the raw bytes of the row: one
/// verification reads a million rows, so each is selected as one binary record (`selectList`;
/// one cell to walk instead of twenty) and nothing is copied that is only compared.
struct StoredEventReader {
    /// The stored id, canonical bytes and links, then the canonical's columns, as one record.
    static let selectList = "ROW(id, canonical, prev_hash, hash, \(AuditCanonical.selectList))"
    private static let stored = 4

    private var canonical = AuditCanonical()
    private var columns = [UnsafeRawBufferPointer?](
        repeating: nil, count: stored + AuditCanonical.Column.allCases.count)
    private var chain: (bytes: [UInt8], name: String)?

    /// The event in `row` (a `selectList` record); nil when the row is not such a record.
    mutating func event(_ row: PostgresRow) -> ChainedEvent? {
        guard let record = row.first(where: { _ in true })?.bytes else { return nil }
        return record.withUnsafeReadableBytes { record in
            guard Self.split(record, into: &columns), let id = columns[0]?.int64, let stored = columns[1],
                let prev = columns[2],
                let hash = columns[3]
            else { return nil }
            let columnsMatch =
                canonical.build(columns, offset: Self.stored) && canonical.bytes.withUnsafeBytes { same($0, stored) }
            return ChainedEvent(
                id: id, chain: chainName(columns[Self.stored + AuditCanonical.Column.chain.rawValue]),
                seq: columns[Self.stored + AuditCanonical.Column.seq.rawValue]?.int64 ?? 0, prevHash: Array(prev),
                hash: Array(hash),
                columnsMatch: columnsMatch, hashMatches: Self.links(prev, stored, to: hash))
        }
    }

    /// Appends `audit export`'s line for the event in `row` (a `selectList` record) and a newline
    /// to `buffer`; answers the event's id, nil when the row is not such a record.
    mutating func exportLine(_ row: PostgresRow, into buffer: inout ByteBuffer) -> Int64? {
        guard let record = row.first(where: { _ in true })?.bytes else { return nil }
        return record.withUnsafeReadableBytes { record -> Int64? in
            guard Self.split(record, into: &columns), let id = columns[0]?.int64, let stored = columns[1],
                let prev = columns[2],
                let hash = columns[3],
                canonical.buildExportLine(
                    id: id, canonical: stored, prevHash: prev, hash: hash, columns: columns, offset: Self.stored)
            else { return nil }
            buffer.writeBytes(canonical.bytes)
            buffer.writeInteger(UInt8(ascii: "\n"))
            return id
        }
    }

    /// The tenant_id of the event in `row` (a `selectList` record).
    mutating func tenant(_ row: PostgresRow) -> UUID? {
        guard let record = row.first(where: { _ in true })?.bytes else { return nil }
        return record.withUnsafeReadableBytes { record -> UUID? in
            guard Self.split(record, into: &columns),
                let raw = columns[Self.stored + AuditCanonical.Column.tenantID.rawValue], raw.count == 16
            else { return nil }
            return UUID(uuid: raw.loadUnaligned(as: uuid_t.self))
        }
    }

    /// Splits a binary record (`record_send`: the column count, then each column's type oid,
    /// length (-1 for NULL) and bytes) into its columns; false when it is not `columns.count` long.
    private static func split(_ record: UnsafeRawBufferPointer, into columns: inout [UnsafeRawBufferPointer?]) -> Bool {
        guard record.count >= 4, Int(Int32(bigEndian: record.loadUnaligned(as: Int32.self))) == columns.count else {
            return false
        }
        var offset = 4
        for index in columns.indices {
            guard offset + 8 <= record.count else { return false }
            let length = Int(Int32(bigEndian: record.loadUnaligned(fromByteOffset: offset + 4, as: Int32.self)))
            offset += 8
            if length < 0 {
                columns[index] = nil
                continue
            }
            guard offset + length <= record.count else { return false }
            columns[index] = UnsafeRawBufferPointer(rebasing: record[offset..<offset + length])
            offset += length
        }
        return true
    }

    /// The chain's name, made once per run of events of one chain rather than once per event.
    private mutating func chainName(_ bytes: UnsafeRawBufferPointer?) -> String {
        guard let bytes else { return "" }
        if let chain, chain.bytes.withUnsafeBytes({ same($0, bytes) }) { return chain.name }
        let name = String(decoding: bytes, as: UTF8.self)
        chain = (Array(bytes), name)
        return name
    }

    /// SHA-256(previous ‖ canonical) == hash.
    private static func links(
        _ previous: UnsafeRawBufferPointer, _ canonical: UnsafeRawBufferPointer, to hash: UnsafeRawBufferPointer
    ) -> Bool {
        var hasher = SHA256()
        hasher.update(bufferPointer: previous)
        hasher.update(bufferPointer: canonical)
        return hasher.finalize().withUnsafeBytes { same($0, hash) }
    }
}

extension UnsafeRawBufferPointer {
    /// The value as a binary int8 (8 bytes, big-endian); nil when it is not 8 bytes long.
    var int64: Int64? {
        count == 8 ? Int64(bigEndian: loadUnaligned(as: Int64.self)) : nil
    }
}

/// Whether two byte ranges hold the same bytes.
private func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    guard let x = a.baseAddress, let y = b.baseAddress else { return true }
    return memcmp(x, y, a.count) == 0
}
