import CSV
import Crypto
import Foundation
import BackofficePlatform

/// A file of goods, as partners import and export them: CSV with a header row, or JSON Lines.
/// The columns (CSV) or keys (JSONL): `sku`, `name`, `description`, `category`, `price_cents`,
/// `price_fitpoints`, `stock`, `status`, `image_urls` (CSV: separated by spaces; JSONL: an array).
package enum GoodsFileFormat: String, Sendable, CaseIterable {
    case csv, jsonl

    static let columns = [
        "sku", "name", "description", "category", "price_cents", "price_fitpoints", "stock", "status", "image_urls",
    ]
}

/// One good read from a file, with the line it starts on.
package struct GoodRow: Sendable {
    package var line: Int
    package var sku: String
    package var fields: GoodFields
    /// The status the file gives; nil keeps an existing good's (a new one starts as a draft).
    package var status: Good.Status?
}

/// A row the import refuses, by line (1 is the CSV header; JSONL lines count from 1).
package struct RowIssue: Sendable, Equatable {
    package var line: Int
    package var sku: String?
    package var field: String
    package var code: String
    package var message: String
}

/// A goods file read: its rows, the issues of the rows it refuses (in no particular order: the
/// import sorts them with its own), and the file's SHA-256 (hex).
package struct GoodsFileContents: Sendable {
    package var rows: [GoodRow]
    package var issues: [RowIssue]
    package var sha256: String
}

/// Reads a goods file as it arrives (`feed` each part, then `finish`): complete records are
/// parsed in batches of about 256 KiB and their bytes let go, so the file itself never sits in
/// memory whole (its rows do: the import writes them in one transaction); a record over 1 MiB
/// refuses the file. Never throws for a bad
/// row; a file that cannot be read at all (no header, unknown columns, not UTF-8) is refused
/// whole (`MalformedGoodsFile`).
package struct GoodsFileReader {
    let format: GoodsFileFormat
    private var pending: [UInt8] = []
    /// How far `pending` has been scanned for record ends, and the CSV state there (RFC 4180, as
    /// CSV.swift reads it: a quote opens a quoted field only at the start of a field; inside one,
    /// a quote closes it unless another follows, which is an escaped quote).
    private var scanned = 0
    private var inQuotes = false
    private var atFieldStart = true
    private var justClosed = false
    /// Where the last complete record in `pending` ends (just after its line break).
    private var complete = 0
    /// The line `pending` starts on.
    private var line = 1
    private var header: [String]?
    private var rows: [GoodRow] = []
    private var issues: [RowIssue] = []
    private var seen: [String: Int] = [:]
    private var hasher = SHA256()

    /// How many bytes of complete records are parsed at once (256 KiB).
    let batchSize: Int
    /// The longest record read (1 MiB): far more than any good's fields, so memory stays bounded.
    let longestRecord: Int

    /// The bytes held now: the records not parsed yet (under a batch and one record).
    var buffered: Int { pending.count }

    /// A reader of the service's sizes; tests pass smaller ones to cross batches with small files.
    package init(format: GoodsFileFormat, batchSize: Int = 256 << 10, longestRecord: Int = 1 << 20) {
        (self.format, self.batchSize, self.longestRecord) = (format, batchSize, longestRecord)
    }

    /// Takes the next part of the file.
    package mutating func feed(_ bytes: some Collection<UInt8>) throws {
        hasher.update(data: Array(bytes))
        pending.append(contentsOf: bytes)
        while scanned < pending.count {
            let byte = pending[scanned]
            if format == .jsonl {
                if byte == UInt8(ascii: "\n") { complete = scanned + 1 }
            } else {
                scan(byte)
            }
            scanned += 1
        }
        if pending.count - complete > longestRecord {
            let start = line + pending[..<complete].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            let limit = longestRecord >= 1 << 20 ? "\(longestRecord >> 20) MiB" : "\(longestRecord >> 10) KiB"
            throw MalformedGoodsFile(reason: "the record on line \(start) is longer than \(limit) (an unclosed quote?)")
        }
        if complete >= batchSize { try parse(upTo: complete) }
    }

    /// One CSV byte: the quote state, and where a record ends (a line break outside quotes).
    private mutating func scan(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""):
            if inQuotes {
                (inQuotes, justClosed) = (false, true)
            } else if justClosed || atFieldStart {
                (inQuotes, justClosed) = (true, false)  // an escaped quote, or a quoted field opening
            }  // else: a quote inside an unquoted field is an ordinary character
            atFieldStart = false
            return
        case UInt8(ascii: ","):
            if !inQuotes { atFieldStart = true }
        case UInt8(ascii: "\n"):
            if !inQuotes {
                complete = scanned + 1
                atFieldStart = true
            }
        case UInt8(ascii: "\r"):
            break  // part of a CRLF: the field start stays as it is
        default:
            if !inQuotes { atFieldStart = false }
        }
        justClosed = false
    }

    /// The rows and issues of the whole file, once every part has been fed.
    package mutating func finish() throws -> GoodsFileContents {
        try parse(upTo: pending.count)
        if format == .csv && header == nil { throw MalformedGoodsFile(reason: "no header row") }
        return GoodsFileContents(rows: rows, issues: issues, sha256: hex(Array(hasher.finalize())))
    }

    /// Reads a whole file at once.
    package static func read(_ bytes: [UInt8], format: GoodsFileFormat) throws -> GoodsFileContents {
        var reader = GoodsFileReader(format: format)
        try reader.feed(bytes)
        return try reader.finish()
    }

    /// Parses the complete records before `end` and lets their bytes go.
    private mutating func parse(upTo end: Int) throws {
        guard end > 0 else { return }
        let batch = Array(pending[..<end])
        pending.removeFirst(end)
        (scanned, complete) = (scanned - end, max(0, complete - end))
        let first = line
        line += batch.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        switch format {
        case .csv: try readCSV(batch, startingAt: first)
        case .jsonl: try readJSONLines(batch, startingAt: first)
        }
    }

    private mutating func add(line: Int, _ values: [String: String]) {
        guard let row = GoodsFile.parse(line: line, values, into: &issues) else { return }
        if let earlier = seen[row.sku] {
            issues.append(
                RowIssue(
                    line: row.line, sku: row.sku, field: "sku", code: "duplicate_sku",
                    message: "repeats line \(earlier)"))
            return
        }
        seen[row.sku] = row.line
        rows.append(row)
    }

    /// CSV records with a header row first (a BOM is skipped). A row's line is where it starts:
    /// quoted fields may hold line breaks, and those are counted. A value an export neutralised
    /// (`'=…`) reads back as it was (`SafeText.csvValue`).
    private mutating func readCSV(_ bytes: [UInt8], startingAt first: Int) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw MalformedGoodsFile(reason: "the file is not UTF-8")
        }
        let reader: CSVReader
        do { reader = try CSVReader(stream: InputStream(data: Data(bytes)), hasHeaderRow: header == nil) } catch {
            throw MalformedGoodsFile(reason: "no header row")
        }
        var line = first
        if header == nil {
            guard let names = reader.headerRow?.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }),
                !names.isEmpty
            else {
                throw MalformedGoodsFile(reason: "no header row")
            }
            let unknown = names.filter { !GoodsFileFormat.columns.contains($0) }
            guard unknown.isEmpty else {
                throw MalformedGoodsFile(
                    reason:
                        "unknown column(s) \(unknown.joined(separator: ", ")); "
                            + "known: \(GoodsFileFormat.columns.joined(separator: ", "))"
                )
            }
            header = names
            line += 1 + GoodsFile.lineBreaks(in: names)
        }
        let header = self.header ?? []
        while let values = reader.next() {
            defer { line += 1 + GoodsFile.lineBreaks(in: values) }
            if values.count == 1 && values[0].isEmpty { continue }  // a blank line
            var fields: [String: String] = [:]
            for (index, name) in header.enumerated() where index < values.count {
                fields[name] = SafeText.csvValue(values[index])
            }
            if values.count != header.count { fields["__columns"] = "\(values.count)" }
            add(line: line, fields)
        }
        if let error = reader.error { throw MalformedGoodsFile(reason: "unreadable at line \(line): \(error)") }
    }

    /// JSON Lines: one object per line; blank lines are skipped.
    private mutating func readJSONLines(_ bytes: [UInt8], startingAt first: Int) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw MalformedGoodsFile(reason: "the file is not UTF-8")
        }
        let decoder = JSONDecoder()
        // Split on the byte: a CRLF is one Character in Swift, and its CR is trimmed as whitespace.
        for (index, lineBytes) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        {
            let line = first + index
            let raw = String(decoding: lineBytes, as: UTF8.self)
            let data = Data(raw.utf8)
            guard !raw.allSatisfy(\.isWhitespace) else { continue }
            guard let keys = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                add(line: line, ["__json": "invalid"])
                continue
            }
            if let unknown = keys.keys.sorted().first(where: { !GoodsFileFormat.columns.contains($0) }) {
                add(line: line, ["__unknown": unknown])
                continue
            }
            do {
                add(line: line, try decoder.decode(GoodsFile.JSONLine.self, from: data).values)
            } catch let DecodingError.typeMismatch(_, context) {
                add(line: line, ["__type": context.codingPath.first?.stringValue ?? "line"])
            } catch {
                add(line: line, ["__json": "invalid"])
            }
        }
    }
}
