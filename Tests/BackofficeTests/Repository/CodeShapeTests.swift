import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// The shape of the code and the docs that describe it, held by tests so that neither drifts: lines
/// within 120 columns, functions within 60 lines (the named exceptions have a decision record), and
/// every source path and type the docs name exists.
@Suite("The code's shape: 120 columns, 60-line functions, docs that name only what exists")
struct CodeShapeTests {
    static let root = projectRoot.path

    /// Every Swift file of the package (Sources/ and Tests/), relative to the root.
    static let swiftFiles: [String] = {
        var files: [String] = []
        for folder in ["Sources", "Tests"] {
            let enumerator = FileManager.default.enumerator(atPath: "\(root)/\(folder)")
            while let path = enumerator?.nextObject() as? String {
                if path.hasSuffix(".swift") { files.append("\(folder)/\(path)") }
            }
        }
        return files.sorted()
    }()

    static func text(_ file: String) throws -> String {
        try String(contentsOfFile: "\(root)/\(file)", encoding: .utf8)
    }

    @Test("every line of Swift is at most 120 characters, as .swift-format says")
    func linesWithin120() throws {
        let format = try Self.text(".swift-format")
        #expect(format.contains("\"lineLength\": 120"))
        var long: [String] = []
        #expect(Self.swiftFiles.count > 100)
        for file in Self.swiftFiles {
            for (index, line) in try Self.text(file).split(separator: "\n", omittingEmptySubsequences: false)
                .enumerated()
            where line.count > 120 {
                long.append("\(file):\(index + 1) (\(line.count))")
            }
        }
        #expect(long.isEmpty, "lines over 120 characters: \(long.joined(separator: ", "))")
    }

    @Test(
        "no code of Sources sleeps but on `Timers` (so a test can move its time): no Task.sleep, Thread.sleep or usleep"
    )
    func sleepsOnTimers() throws {
        var found: [String] = []
        for file in Self.swiftFiles where file.hasPrefix("Sources/") {
            for (index, line) in try Self.text(file).split(separator: "\n", omittingEmptySubsequences: false)
                .enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                && (line.contains("Task.sleep") || line.contains("Thread.sleep") || line.contains("usleep("))
            {
                found.append("\(file):\(index + 1)")
            }
        }
        #expect(found.isEmpty, "sleeps outside Timers: \(found.joined(separator: ", "))")
    }

    @Test("no domain reads the clock: a use case takes unit.now, a page or an answer its request's now")
    func domainsReadNoClock() throws {
        // the shell; and the simulated payment provider, another system that keeps its own time
        let shell = [
            "Sources/Backoffice/Console/", "Sources/Backoffice/Server/",
            "Sources/Backoffice/Payments/SimulatedPaymentGateway.swift",
        ]
        var found: [String] = []
        for file in Self.swiftFiles
        where file.hasPrefix("Sources/Backoffice/") && !shell.contains(where: { file.hasPrefix($0) }) {
            for (index, line) in try Self.text(file).split(separator: "\n", omittingEmptySubsequences: false)
                .enumerated()
            where line.contains("clock.now()") || line.contains("Date()") || line.contains("Date.now") {
                found.append("\(file):\(index + 1)")
            }
        }
        #expect(found.isEmpty, "domain code reading the clock: \(found.joined(separator: ", "))")
    }

    @Test("no function is over 60 lines, except those docs/decisions/long-functions.md names and explains")
    func functionsWithin60Lines() throws {
        let record = try Self.text("docs/decisions/long-functions.md")
        // The record's list: one `- `File.swift`: `name`` line per exception.
        let entry = #/^- `([A-Za-z0-9+]+\.swift)`: `([A-Za-z0-9]+)`/#
        let listed = Set(
            record.split(separator: "\n").compactMap { $0.firstMatch(of: entry) }.map {
                "\($0.output.1):\($0.output.2)"
            })
        #expect(!listed.isEmpty, "the record lists its exceptions")
        var long: [String: Int] = [:]
        for file in Self.swiftFiles where file.hasPrefix("Sources/") {
            for function in SwiftFunctions.lengths(in: try Self.text(file)) where function.lines > 60 {
                long["\((file as NSString).lastPathComponent):\(function.name)"] = function.lines
            }
        }
        let unexplained = long.keys.filter { !listed.contains($0) }.sorted()
        #expect(unexplained.isEmpty, "over 60 lines without a record: \(unexplained.map { "\($0) (\(long[$0]!))" })")
        let stale = listed.subtracting(long.keys).sorted()
        #expect(stale.isEmpty, "listed in the record but no longer over 60 lines (drop them): \(stale)")
    }

    @Test("no source file is over 300 lines, except those docs/decisions/long-files.md names and explains")
    func filesWithin300Lines() throws {
        let record = try Self.text("docs/decisions/long-files.md")
        let entry = #/^- `([A-Za-z0-9+]+\.swift)`/#
        let listed = Set(
            record.split(separator: "\n").compactMap { $0.firstMatch(of: entry) }.map { String($0.output.1) })
        #expect(!listed.isEmpty, "the record lists its exceptions")
        var long: [String: Int] = [:]
        for file in Self.swiftFiles where file.hasPrefix("Sources/") {
            let lines = try Self.text(file).split(separator: "\n", omittingEmptySubsequences: false).count
            if lines > 300 { long[(file as NSString).lastPathComponent] = lines }
        }
        let unexplained = long.keys.filter { !listed.contains($0) }.sorted()
        #expect(unexplained.isEmpty, "over 300 lines without a record: \(unexplained.map { "\($0) (\(long[$0]!))" })")
        let stale = listed.subtracting(long.keys).sorted()
        #expect(stale.isEmpty, "listed in the record but no longer over 300 lines (drop them): \(stale)")
    }

    @Test("the scanner measures a function from its `func` line to its closing brace, braces in strings aside")
    func scannerCounts() {
        let source = """
            struct A {
                func short() { }
                func braces() -> String {
                    let json = "{ \\"a\\": 1 }"  // a } in a comment
                    /* { */
                    return \"""
                        {
                        \"""
                }
                init(x: Int) {
                    if x > 0 {
                        print(x)
                    }
                }
            }
            protocol P {
                func required()
            }
            func continued() -> String {
                let text = \"""
                    one \\
                    two
                    \"""
                let regex = #/\\{\\{/#
                return text
            }
            """
        let lengths = SwiftFunctions.lengths(in: source)
        #expect(lengths.map(\.name) == ["short", "braces", "init", "continued"])
        #expect(lengths.map(\.lines) == [1, 7, 5, 8], "a continued line and a regex's braces counted as they are")
    }

    @Test("every Sources/ or Tests/ path and every type name in backticks in README, ARCHITECTURE and docs/ exists")
    func docsNameWhatExists() throws {
        var declared = Set<String>()
        var fileNames = Set<String>()
        let declaration =
            #/\b(?:struct|enum|class|protocol|actor|typealias|case|func|let|var)\s+([A-Za-z_][A-Za-z0-9_]*)/#
        for file in Self.swiftFiles {
            fileNames.insert((file as NSString).lastPathComponent)
            for match in try Self.text(file).matches(of: declaration) { declared.insert(String(match.output.1)) }
        }
        // Types of Swift and of the dependencies that the docs name.
        let external: Set<String> = [
            "String", "Character", "Codable", "Mirror", "Duration", "ByteBuffer", "ByteBufferView",
            "PostgresConnection",
            "PostgresClient", "System", "StreamLogHandler", "MustacheParent", "MustacheLibrary", "EventSource", "Task",
            "TaskLocal", "Mutex", "ServiceGroup", "Router", "RouterGroup", "MetricsMiddleware", "APIProtocol", "Ink",
            "NIOSingletons",
        ]
        let markdown =
            ["README.md", "ARCHITECTURE.md"]
            + (try FileManager.default.subpathsOfDirectory(atPath: "\(Self.root)/docs"))
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        var missing: [String] = []
        let path = #/(?:Sources|Tests)/[A-Za-z0-9_./+-]*[A-Za-z0-9_](?![A-Za-z0-9_<])/#
        let typeName = #/[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*/#
        for doc in markdown {
            let text = try Self.text(doc)
            for match in text.matches(of: path)
            where !FileManager.default.fileExists(atPath: "\(Self.root)/\(match.output)") {
                missing.append("\(doc): \(match.output)")
            }
            for span in text.matches(of: #/`([^`\n]+)`/#) {
                let token = String(span.output.1)
                if token.hasSuffix(".swift") {
                    // A file named by itself (a pattern such as `APIHandler+<Domain>.swift` aside).
                    if !token.contains("/"), !token.contains("<"), !fileNames.contains(token) {
                        missing.append("\(doc): \(token)")
                    }
                    continue
                }
                guard token.wholeMatch(of: typeName) != nil else { continue }
                let parts = token.split(separator: ".").map(String.init)
                if external.contains(parts[0]) { continue }
                // The type, and each member named after it (`OperationContext.system`), is declared.
                if !parts.allSatisfy(declared.contains) { missing.append("\(doc): `\(token)`") }
            }
        }
        #expect(missing.isEmpty, "named in the docs, not in the tree: \(missing.joined(separator: "; "))")
    }
}

/// A rough Swift scanner for the function-length rule: each `func` or `init` with a body, and the
/// lines from its declaration to its closing brace. Comments and string literals (single-line,
/// multi-line and raw) are skipped, so their braces do not count.
enum SwiftFunctions {
    struct Length: Equatable {
        let name: String
        let lines: Int
    }

    static func lengths(in source: String) -> [Length] {
        let chars = Array(source.unicodeScalars)
        var results: [Length] = []
        var line = 1
        var depth = 0
        // The declaration whose body has not opened yet, and the bodies open now.
        var pending: (name: String, line: Int, depth: Int, parens: Int)?
        var open: [(name: String, line: Int, depth: Int)] = []
        var i = 0
        func at(_ offset: Int) -> Unicode.Scalar? { i + offset < chars.count ? chars[i + offset] : nil }
        func word() -> String {
            var end = i
            while end < chars.count,
                chars[end].properties.isAlphabetic || chars[end] == "_" || ("0"..."9").contains(chars[end])
            {
                end += 1
            }
            return String(String.UnicodeScalarView(chars[i..<end]))
        }
        while i < chars.count {
            let c = chars[i]
            if c == "\n" {
                line += 1
                i += 1
                continue
            }
            if c == "/", at(1) == "/" {
                while i < chars.count, chars[i] != "\n" { i += 1 }
                continue
            }
            if c == "/", at(1) == "*" {
                i += 2
                while i < chars.count, !(chars[i] == "*" && at(1) == "/") {
                    if chars[i] == "\n" { line += 1 }
                    i += 1
                }
                i += 2
                continue
            }
            if c == "#", at(1) == "/" {
                // A regex literal `#/…/#`: its braces are not code.
                i += 2
                while i < chars.count, !(chars[i] == "/" && at(1) == "#") {
                    if chars[i] == "\n" { line += 1 }
                    i += 1
                }
                i += 2
                continue
            }
            if c == "#" || c == "\"" {
                var hashes = 0
                while at(hashes) == "#" { hashes += 1 }
                guard at(hashes) == "\"" else {
                    i += 1
                    continue
                }
                i += hashes
                let multi = at(1) == "\"" && at(2) == "\""
                let quote = multi ? 3 : 1
                i += quote
                let closing = String(repeating: "\"", count: quote) + String(repeating: "#", count: hashes)
                let closer = Array(closing.unicodeScalars)
                while i < chars.count {
                    if chars[i] == "\\" && hashes == 0 {
                        if at(1) == "\n" { line += 1 }  // a line continued inside the literal
                        i += 2
                        continue
                    }
                    if chars[i] == "\n" { line += 1 }
                    if Array(chars[i..<min(i + closer.count, chars.count)]) == closer {
                        i += closer.count
                        break
                    }
                    i += 1
                }
                continue
            }
            if c.properties.isAlphabetic || c == "_" {
                let name = word()
                let before = i == 0 ? " " : chars[i - 1]
                if before != "." && before != "@" && (name == "func" || name == "init") {
                    var j = i + name.count
                    var declared = name
                    if name == "func" {
                        while j < chars.count, chars[j] == " " { j += 1 }
                        var end = j
                        while end < chars.count,
                            chars[end].properties.isAlphabetic || chars[end] == "_"
                                || ("0"..."9").contains(chars[end])
                        {
                            end += 1
                        }
                        declared = String(String.UnicodeScalarView(chars[j..<end]))
                    }
                    pending = (declared, line, depth, 0)
                }
                i += name.count
                continue
            }
            switch c {
            case "(":
                pending?.parens += 1
            case ")":
                pending?.parens -= 1
            case "{":
                if let declaration = pending, declaration.parens == 0, declaration.depth == depth {
                    open.append((declaration.name, declaration.line, depth))
                    pending = nil
                }
                depth += 1
            case "}":
                depth -= 1
                // A declaration without a body (a protocol's requirement) ends with its scope.
                if let declaration = pending, depth < declaration.depth { pending = nil }
                if let last = open.last, last.depth == depth {
                    open.removeLast()
                    results.append(Length(name: last.name, lines: line - last.line + 1))
                }
            default:
                break
            }
            i += 1
        }
        return results
    }
}
