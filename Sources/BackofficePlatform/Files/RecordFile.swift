import Foundation

/// How a file of records is written: CSV with a header row (comma- or tab-separated: the header
/// line decides), or JSON Lines (one object per line).
package enum RecordFileFormat: String, Sendable, CaseIterable {
    case csv, jsonl
}

/// What a kind of record file holds (goods, foods): the columns it reads, and how one record's
/// values are checked into a row. `RecordFileReader` does the rest: reading as the file arrives,
/// lines, the header, duplicate keys, and the issues of records that cannot be read.
package protocol RecordFileLayout {
    associatedtype Row: Sendable
    /// The columns (CSV header names, JSON keys) the layout reads.
    static var columns: [String] { get }
    /// Whether a column the layout does not read is ignored (an Open Food Facts export carries two
    /// hundred) rather than refusing the file (a misspelt column must not silently lose a field).
    static var ignoresOtherColumns: Bool { get }
    /// The column that names a row (`sku`); a file that repeats one refuses the later row.
    static var keyColumn: String { get }
    /// What a JSON line's value of the wrong type is told (JSON Lines only).
    static var typeHint: String { get }
    /// The value of `keyColumn` in `row`.
    static func key(of row: Row) -> String
    /// One record's values by column checked into a row, or nil with its issues added to `issues`.
    static func row(line: Int, _ values: [String: String], into issues: inout [RowIssue]) -> Row?
    /// One JSON line's values by column, as text (JSON Lines only).
    /// - Throws: `DecodingError.typeMismatch` for a value of the wrong type.
    static func values(ofJSONLine data: Data) throws -> [String: String]
}

/// A row a file's reader or its import refuses, by line (1 is the CSV header; JSON Lines count
/// from 1), with the row's key (`RecordFileLayout.keyColumn`) when it has one.
package struct RowIssue: Sendable, Equatable {
    package var line: Int
    package var key: String?
    package var field: String
    package var code: String
    package var message: String

    package init(line: Int, key: String?, field: String, code: String, message: String) {
        (self.line, self.key, self.field, self.code, self.message) = (line, key, field, code, message)
    }

    /// How many rows `issues` name (a row may have several).
    package static func lines(_ issues: [RowIssue]) -> Int { Set(issues.map(\.line)).count }
}

/// A record file read: its rows, the issues of the rows it refuses (in no particular order: an
/// import sorts them with its own), and the file's SHA-256 (hex).
package struct RecordFileContents<Row: Sendable>: Sendable {
    package var rows: [Row]
    package var issues: [RowIssue]
    package var sha256: String

    package init(rows: [Row], issues: [RowIssue], sha256: String) {
        (self.rows, self.issues, self.sha256) = (rows, issues, sha256)
    }
}

/// A record file that cannot be read at all (no header, unknown columns, not UTF-8, a record too long).
package struct MalformedFile: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { reason }

    package init(reason: String) { self.reason = reason }
}

/// What an import of a record file did (or, in a dry run, would do).
package struct ImportReport: Sendable {
    package var dryRun: Bool
    package var allOrNothing: Bool
    package var rows: Int
    package var created: Int
    package var updated: Int
    package var issues: [RowIssue]
    /// Rows refused (a row may have several issues).
    package var rejected: Int { RowIssue.lines(issues) }

    package init(dryRun: Bool, allOrNothing: Bool, rows: Int, created: Int, updated: Int, issues: [RowIssue]) {
        (self.dryRun, self.allOrNothing, self.rows, self.created, self.updated) =
            (dryRun, allOrNothing, rows, created, updated)
        self.issues = issues
    }

    /// Refuses the whole file when an all-or-nothing import has `issues` (422 `import_rejected`,
    /// the first thousand listed, each named `line N: field`).
    package static func checkAllOrNothing(_ allOrNothing: Bool, _ issues: [RowIssue]) throws {
        guard allOrNothing && !issues.isEmpty else { return }
        throw DomainError.unprocessable(
            code: "import_rejected",
            detail: "\(issues.count) row(s) have errors; nothing was imported (all or nothing).",
            issues: issues.prefix(1_000).map {
                FieldIssue(field: "line \($0.line): \($0.field)", code: $0.code, message: $0.message)
            })
    }
}

extension MalformedFile {
    /// The import's refusal of a file that cannot be read at all (422 `malformed_file`), naming
    /// the file as `what` ("The csv file", "The foods file").
    package func refusal(_ what: String) -> DomainError {
        DomainError.unprocessable(
            code: "malformed_file", detail: "\(what) cannot be read: \(reason).",
            issues: [FieldIssue(field: "file", code: "malformed_file", message: reason)])
    }
}
