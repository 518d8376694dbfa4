import CSV
import Crypto
import Foundation

/// Reads a record file as it arrives (`feed` each part, then `finish`): complete records are
/// parsed in batches of about 256 KiB and their bytes let go, so the file itself never sits in
/// memory whole (its rows do: an import writes them in one transaction); a record over 1 MiB
/// refuses the file. Never throws for a bad row; a file that cannot be read at all (no header,
/// unknown columns, not UTF-8) is refused whole (`MalformedFile`). Each byte is looked at a
/// bounded number of times: the work is linear in the file's size.
package struct RecordFileReader<Layout: RecordFileLayout> {
    let format: RecordFileFormat
    private var pending: [UInt8] = []
    /// The CSV's separator, decided by its first line (a tab when it has tabs and no comma).
    private var delimiter: UInt8?
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
    private var rows: [Layout.Row] = []
    private var issues: [RowIssue] = []
    private var seen: [String: Int] = [:]
    private var hasher = SHA256()

    /// How many bytes of complete records are parsed at once (256 KiB).
    let batchSize: Int
    /// The longest record read (1 MiB): far more than any row's fields, so memory stays bounded.
    let longestRecord: Int

    /// The bytes held now: the records not parsed yet (under a batch and one record).
    package var buffered: Int { pending.count }

    /// A reader of the service's sizes; tests pass smaller ones to cross batches with small files.
    package init(format: RecordFileFormat, batchSize: Int = 256 << 10, longestRecord: Int = 1 << 20) {
        (self.format, self.batchSize, self.longestRecord) = (format, batchSize, longestRecord)
        if format == .jsonl { delimiter = UInt8(ascii: ",") }  // not used: lines end records
    }

    /// Takes the next part of the file.
    package mutating func feed(_ bytes: some Collection<UInt8>) throws {
        hasher.update(data: Array(bytes))
        pending.append(contentsOf: bytes)
        if delimiter == nil, let end = pending.firstIndex(of: UInt8(ascii: "\n")) { decideDelimiter(pending[..<end]) }
        while delimiter != nil, scanned < pending.count {
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
            throw MalformedFile(reason: "the record on line \(start) is longer than \(limit) (an unclosed quote?)")
        }
        if complete >= batchSize { try parse(upTo: complete) }
    }

    /// The separator of a CSV: a tab when its first line has tabs and no comma, else a comma.
    private mutating func decideDelimiter(_ firstLine: ArraySlice<UInt8>) {
        let tab = firstLine.contains(UInt8(ascii: "\t")) && !firstLine.contains(UInt8(ascii: ","))
        delimiter = tab ? UInt8(ascii: "\t") : UInt8(ascii: ",")
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
        case delimiter:
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
    package mutating func finish() throws -> RecordFileContents<Layout.Row> {
        if delimiter == nil {
            decideDelimiter(pending[...])
            try feed([UInt8]())
        }
        try parse(upTo: pending.count)
        if format == .csv && header == nil { throw MalformedFile(reason: "no header row") }
        return RecordFileContents(rows: rows, issues: issues, sha256: hex(Array(hasher.finalize())))
    }

    /// Reads a whole file at once.
    package static func read(_ bytes: [UInt8], format: RecordFileFormat) throws -> RecordFileContents<Layout.Row> {
        var reader = RecordFileReader(format: format)
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

    /// One record's values checked into a row; a key the file used before refuses the later row.
    private mutating func add(line: Int, _ values: [String: String]) {
        guard let row = Self.row(line: line, values, into: &issues) else { return }
        let key = Layout.key(of: row)
        if let earlier = seen[key] {
            issues.append(
                RowIssue(
                    line: line, key: key, field: Layout.keyColumn, code: "duplicate_\(Layout.keyColumn)",
                    message: "repeats line \(earlier)"))
            return
        }
        seen[key] = line
        rows.append(row)
    }

    /// A record the reader could not take apart is its issue; one with a NUL character too;
    /// the rest are the layout's to check.
    private static func row(line: Int, _ values: [String: String], into issues: inout [RowIssue]) -> Layout.Row? {
        let key = values[Layout.keyColumn]?.trimmingCharacters(in: .whitespaces)
        func refuse(_ field: String, _ code: String, _ message: String) -> Layout.Row? {
            issues.append(
                RowIssue(line: line, key: key?.isEmpty == false ? key : nil, field: field, code: code, message: message)
            )
            return nil
        }
        if values[Unreadable.json] != nil { return refuse("line", "invalid_json", "not a JSON object") }
        if let key = values[Unreadable.unknown] {
            return refuse(key, "unknown_field", "known: \(Layout.columns.joined(separator: ", "))")
        }
        if let key = values[Unreadable.type] {
            return refuse(key, "invalid_type", "has the wrong type (\(Layout.typeHint))")
        }
        if let count = values[Unreadable.columns] {
            return refuse("line", "column_count", "\(count) values for \(Layout.columns.count) or fewer columns")
        }
        if let field = values.keys.sorted().first(where: { values[$0]?.contains("\0") == true }) {
            return refuse(field, "invalid_character", "must not contain the NUL character (U+0000)")
        }
        return Layout.row(line: line, values, into: &issues)
    }

    /// Line breaks inside quoted values (a row's line is where it starts).
    private static func lineBreaks(in values: [String]) -> Int {
        values.reduce(0) { count, value in count + value.unicodeScalars.reduce(0) { $0 + ($1 == "\n" ? 1 : 0) } }
    }

    /// CSV records with a header row first (a BOM is skipped). A row's line is where it starts:
    /// quoted fields may hold line breaks, and those are counted. A value an export neutralised
    /// (`'=…`) reads back as it was (`SafeText.csvValue`).
    private mutating func readCSV(_ bytes: [UInt8], startingAt first: Int) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw MalformedFile(reason: "the file is not UTF-8")
        }
        let reader: CSVReader
        do {
            reader = try CSVReader(
                stream: InputStream(data: Data(bytes)), hasHeaderRow: header == nil,
                delimiter: UnicodeScalar(delimiter ?? UInt8(ascii: ",")))
        } catch {
            throw MalformedFile(reason: "no header row")
        }
        var line = first
        if header == nil {
            try readHeader(reader.headerRow)
            line += 1 + Self.lineBreaks(in: header ?? [])
        }
        let header = self.header ?? []
        while let values = reader.next() {
            defer { line += 1 + Self.lineBreaks(in: values) }
            if values.count == 1 && values[0].isEmpty { continue }  // a blank line
            var fields: [String: String] = [:]
            for (index, name) in header.enumerated() where index < values.count && !name.isEmpty {
                fields[name] = SafeText.csvValue(values[index])
            }
            if values.count != header.count { fields[Unreadable.columns] = "\(values.count)" }
            add(line: line, fields)
        }
        if let error = reader.error { throw MalformedFile(reason: "unreadable at line \(line): \(error)") }
    }

    /// The header's names (trimmed, lower case); those the layout does not read are refused, or
    /// kept as empty names (their values ignored) when the layout ignores other columns.
    private mutating func readHeader(_ row: [String]?) throws {
        guard let names = row?.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }), !names.isEmpty else {
            throw MalformedFile(reason: "no header row")
        }
        let unknown = names.filter { !Layout.columns.contains($0) }
        if Layout.ignoresOtherColumns {
            guard names.contains(Layout.keyColumn) else {
                throw MalformedFile(
                    reason: "no \(Layout.keyColumn) column; read: \(Layout.columns.joined(separator: ", "))")
            }
            header = names.map { Layout.columns.contains($0) ? $0 : "" }
            return
        }
        guard unknown.isEmpty else {
            let known = Layout.columns.joined(separator: ", ")
            throw MalformedFile(reason: "unknown column(s) \(unknown.joined(separator: ", ")); known: \(known)")
        }
        header = names
    }

    /// JSON Lines: one object per line; blank lines are skipped.
    private mutating func readJSONLines(_ bytes: [UInt8], startingAt first: Int) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw MalformedFile(reason: "the file is not UTF-8")
        }
        // Split on the byte: a CRLF is one Character in Swift, and its CR is trimmed as whitespace.
        for (index, lineBytes) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        {
            let line = first + index
            let raw = String(decoding: lineBytes, as: UTF8.self)
            let data = Data(raw.utf8)
            guard !raw.allSatisfy(\.isWhitespace) else { continue }
            guard let keys = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                add(line: line, [Unreadable.json: "invalid"])
                continue
            }
            if !Layout.ignoresOtherColumns,
                let unknown = keys.keys.sorted().first(where: { !Layout.columns.contains($0) })
            {
                add(line: line, [Unreadable.unknown: unknown])
                continue
            }
            do {
                add(line: line, try Layout.values(ofJSONLine: data))
            } catch let DecodingError.typeMismatch(_, context) {
                add(line: line, [Unreadable.type: context.codingPath.first?.stringValue ?? "line"])
            } catch {
                add(line: line, [Unreadable.json: "invalid"])
            }
        }
    }
}

/// What a record the reader could not take apart says, in place of its values (names no column can have).
private enum Unreadable {
    static let json = "\u{1}json", unknown = "\u{1}unknown", type = "\u{1}type", columns = "\u{1}columns"
}
