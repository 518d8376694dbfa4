import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Goods files read as they arrive: the same rows, issues and lines in any parts, never the whole file buffered")
struct GoodsFileReaderTests {
    /// A CSV of `count` goods, every 10th with a description over two lines, every 97th with a bad
    /// stock; with the line each row starts on.
    static func csv(_ count: Int) -> (text: String, lines: [String: Int]) {
        var text = "sku,name,description,category,price_cents,stock\n"
        var lines: [String: Int] = [:]
        var line = 2
        for index in 0..<count {
            let sku = "R-\(index)"
            lines[sku] = line
            let description =
                index % 10 == 0
                ? "\"Two lines, \"\"quoted\"\":\nsecond \(String(repeating: "x", count: 60))\"" : "One line \(index)"
            text +=
                "\(sku),Good \(index),\(description),gear,\(100 + index),"
                + "\(index % 97 == 5 ? "many" : String(index % 7))\n"
            line += index % 10 == 0 ? 2 : 1
        }
        return (text, lines)
    }

    /// The batch and the longest record these tests read with: a sixteenth of the service's, so
    /// small files cross many batches (the sizes are parameters; the logic is the same).
    static let batch = 16 << 10
    static let longest = 64 << 10

    static func reader(_ format: RecordFileFormat) -> GoodsFileReader {
        GoodsFileReader(format: format, batchSize: batch, longestRecord: longest)
    }

    func read(_ bytes: [UInt8], format: RecordFileFormat, parts: Int) throws -> (
        RecordFileContents<GoodRow>, maxBuffered: Int
    ) {
        var reader = Self.reader(format)
        var maxBuffered = 0
        for start in stride(from: 0, to: bytes.count, by: parts) {
            try reader.feed(bytes[start..<min(bytes.count, start + parts)])
            maxBuffered = max(maxBuffered, reader.buffered)
        }
        return (try reader.finish(), maxBuffered)
    }

    @Test(
        """
        a CSV of over two batches fed in parts of 13 bytes, 4 KiB and whole: the same result, rows and issues on \
        the lines they start on
        """
    )
    func csvInParts() throws {
        let (text, lines) = Self.csv(1_200)
        let bytes = Array(text.utf8)
        #expect(bytes.count > 2 * Self.batch)
        var reader = Self.reader(.csv)
        try reader.feed(bytes)
        let whole = try reader.finish()
        #expect(whole.rows.count + whole.issues.count == 1_200)
        #expect(whole.issues.count == 1_200 / 97 + 1)
        for row in whole.rows { #expect(row.line == lines[row.sku], "\(row.sku)") }
        for issue in whole.issues {
            #expect(issue.line == lines[issue.key ?? ""] && issue.field == "stock", "\(issue)")
        }
        for parts in [13, 4096] {
            let (contents, maxBuffered) = try read(bytes, format: .csv, parts: parts)
            #expect(contents.rows.map(\.line) == whole.rows.map(\.line))
            #expect(contents.rows.map(\.fields.description) == whole.rows.map(\.fields.description))
            #expect(contents.issues == whole.issues)
            #expect(contents.sha256 == whole.sha256)
            #expect(maxBuffered < Self.batch + parts + 200, "held \(maxBuffered) bytes of a \(bytes.count)-byte file")
        }
    }

    @Test(
        """
        JSON Lines in parts: lines counted across parts, a NUL in a value is that row's issue, a duplicate sku \
        across batches is named
        """
    )
    func jsonLinesInParts() throws {
        var text = ""
        for index in 0..<500 {
            text +=
                #"{"sku":"J-\#(index)","name":"Good \#(index)","category":"gear","price_cents":100,"stock":1}"# + "\n"
        }
        text += #"{"sku":"J-NUL","name":"bad\u0000name","category":"gear","price_cents":100,"stock":1}"# + "\n"
        text += #"{"sku":"J-1","name":"again","category":"gear","price_cents":100,"stock":1}"#  // no final line break
        #expect(text.utf8.count > 2 * Self.batch)
        let (contents, _) = try read(Array(text.utf8), format: .jsonl, parts: 1000)
        #expect(contents.rows.count == 500)
        #expect(
            contents.issues == [
                RowIssue(
                    line: 501, key: "J-NUL", field: "name", code: "invalid_character",
                    message: "must not contain the NUL character (U+0000)"),
                RowIssue(line: 502, key: "J-1", field: "sku", code: "duplicate_sku", message: "repeats line 2"),
            ])
    }

    @Test(
        """
        a file that cannot be read is refused whole: no header, unknown columns, not UTF-8 in a later batch, a \
        record over the longest
        """
    )
    func malformed() throws {
        #expect(throws: MalformedFile.self) { try GoodsFileReader.read([], format: .csv) }
        #expect(throws: MalformedFile.self) {
            try GoodsFileReader.read(Array("sku,colour\nA,red\n".utf8), format: .csv)
        }
        var bytes = Array(Self.csv(1_200).text.utf8)
        bytes += [0xC3, 0x28, 0x0A]
        #expect(bytes.count > 2 * Self.batch)
        #expect(throws: MalformedFile.self) { try read(bytes, format: .csv, parts: 4096) }
        var unclosed = Self.reader(.csv)
        try unclosed.feed(Array("sku,name\nA,\"never closed".utf8))
        try unclosed.feed([UInt8](repeating: UInt8(ascii: "x"), count: Self.longest - 100))
        #expect(throws: MalformedFile.self, "a record past the longest is refused as it arrives") {
            try unclosed.feed([UInt8](repeating: UInt8(ascii: "x"), count: 200))
        }
        var service = GoodsFileReader(format: .csv)
        try service.feed(Array("sku,name\nA,\"never closed".utf8))
        let message = #expect(throws: MalformedFile.self, "the service reads records up to 1 MiB") {
            try service.feed([UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20))
        }
        #expect(message?.reason == "the record on line 2 is longer than 1 MiB (an unclosed quote?)")
    }

    @Test(
        """
        record ends as CSV.swift reads them: a quote inside an unquoted field is a character, an escaped quote \
        stays inside, CRLF lines
        """
    )
    func quotesAndLineEnds() throws {
        var text = "sku,name,description,category,price_cents,stock\r\n"
        for index in 0..<800 {
            text +=
                "Q-\(index),\(index % 3 == 0 ? "55\" TV" : "Good"),"
                + "\(index % 5 == 0 ? "\"say \"\"hi\"\",\r\nthen go\"" : "plain"),gear,100,1\r\n"
        }
        let bytes = Array(text.utf8)
        #expect(bytes.count > Self.batch)
        let (contents, maxBuffered) = try read(bytes, format: .csv, parts: 4096)
        #expect(contents.issues.isEmpty, "\(contents.issues.prefix(3))")
        #expect(contents.rows.count == 800)
        #expect(contents.rows.first { $0.sku == "Q-3" }?.fields.name == "55\" TV")
        #expect(contents.rows.first { $0.sku == "Q-5" }?.fields.description == "say \"hi\",\r\nthen go")
        #expect(contents.rows.last?.line == 2 + 800 + 800 / 5 - 1, "lines count the quoted line breaks")
        #expect(maxBuffered < Self.batch + 4096 + 200)
        let jsonl = (0..<3).map { #"{"sku":"C-\#($0)","name":"n","category":"gear","price_cents":1,"stock":1}"# }
            .joined(separator: "\r\n")
        let lines = try GoodsFileReader.read(Array(jsonl.utf8), format: .jsonl)
        #expect(lines.rows.map(\.line) == [1, 2, 3] && lines.issues.isEmpty, "JSON Lines with CRLF")
    }
}
