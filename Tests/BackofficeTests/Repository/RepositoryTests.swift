import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// The repository as a newcomer meets it: a short front door, links that lead somewhere, scripts
/// that explain themselves before they do anything.
@Suite("The repository: README length, links between docs, every ops script's --help")
struct RepositoryTests {
    static let root = projectRoot.path

    /// The Markdown files a contributor reads: README, ARCHITECTURE, docs/ and the ops notes.
    static var markdownFiles: [String] {
        var files = ["README.md", "ARCHITECTURE.md"]
        for folder in ["docs", "ops"] {
            let enumerator = FileManager.default.enumerator(atPath: "\(root)/\(folder)")
            while let path = enumerator?.nextObject() as? String {
                if path.hasSuffix(".md") { files.append("\(folder)/\(path)") }
            }
        }
        return files.sorted()
    }

    @Test(
        "README.md stays the front door (at most 200 lines) and ARCHITECTURE.md the map (at most 250; detail in docs/)")
    func frontDoorsAreShort() throws {
        for (file, most) in [("README.md", 200), ("ARCHITECTURE.md", 250)] {
            let text = try String(contentsOfFile: "\(Self.root)/\(file)", encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(lines <= most, "\(file) has \(lines) lines (at most \(most))")
        }
    }

    @Test(
        """
        every unquoted value of a flow enum in openapi.yaml stays a string for every YAML reader: no digits \
        with underscores (YAML 1.1 reads `18_29` as 1829), no bare number, no yes/no/on/off
        """
    )
    func contractEnumsAreStrings() throws {
        let text = try String(contentsOfFile: "\(Self.root)/Sources/BackofficeAPI/openapi.yaml", encoding: .utf8)
        var numeric: [String] = []
        for line in text.split(separator: "\n") where line.contains("enum: [") {
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { continue }
            for value in line[line.index(after: open)..<close].split(separator: ",") {
                let token = value.trimmingCharacters(in: .whitespaces)
                let isNumber = !token.isEmpty && token.allSatisfy { $0.isNumber || $0 == "_" || $0 == "." }
                if isNumber || ["yes", "no", "on", "off", "y", "n"].contains(token.lowercased()) {
                    numeric.append("\(token) in \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(numeric.isEmpty, "quote these: \(numeric)")
    }

    @Test("every relative link in the docs names a file or folder that exists")
    func linksResolve() throws {
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        var broken: [String] = []
        #expect(Self.markdownFiles.count > 10)
        for file in Self.markdownFiles {
            let text = try String(contentsOfFile: "\(Self.root)/\(file)", encoding: .utf8)
            let folder = (file as NSString).deletingLastPathComponent
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                if target.contains("://") || target.hasPrefix("mailto:") || target.hasPrefix("#") { continue }
                let path = String(target.split(separator: "#", maxSplits: 1).first ?? "")
                let resolved = ((folder.isEmpty ? Self.root : "\(Self.root)/\(folder)") as NSString)
                    .appendingPathComponent(path)
                if !FileManager.default.fileExists(atPath: resolved) { broken.append("\(file): \(target)") }
            }
        }
        #expect(broken.isEmpty, "links to nothing: \(broken.joined(separator: ", "))")
    }

    @Test("every script under ops/ answers --help and -h with its usage, exits 0 and does nothing else (within 20 s)")
    func scriptsExplainThemselves() async throws {
        var scripts: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: "\(Self.root)/ops")
        while let path = enumerator?.nextObject() as? String {
            let full = "\(Self.root)/ops/\(path)"
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue,
                FileManager.default.isExecutableFile(atPath: full)
            {
                scripts.append(full)
            }
        }
        #expect(scripts.count >= 10, "\(scripts)")
        for script in scripts.sorted() {
            for flag in ["--help", "-h"] {
                let (status, output) = try await offThePool {
                    try ChildProcess.run(["/usr/bin/timeout", "20", script, flag])
                }
                let name = script.replacingOccurrences(of: "\(Self.root)/", with: "")
                #expect(status == 0, "\(name) \(flag) exited \(status): \(output.suffix(300))")
                #expect(
                    output.contains(name) || output.count > 200,
                    "\(name) \(flag) prints its usage: \(output.prefix(200))")
            }
        }
    }

    @Test("ops/new-domain finds every place it registers a domain in today's tree (a dry run: nothing written)")
    func scaffoldPlansAgainstTheTree() async throws {
        let (status, output) = try await offThePool {
            try ChildProcess.run(["\(Self.root)/ops/new-domain", "Samples", "--dry-run"])
        }
        #expect(status == 0, "\(output)")
        for file in [
            "sql/migrations/", "Sources/Backoffice/Samples/Sample.swift",
            "Sources/Backoffice/Samples/Pages/samples.mustache",
            "Tests/BackofficeTests/Samples/SamplesTests.swift",
            "Sources/BackofficeAPI/openapi.yaml", "policies/access.yaml",
            "Sources/Backoffice/Server/ConsoleSections.swift",
            "Package.swift", "Sources/backoffice/Backoffice.swift", "docs/domains.md",
        ] {
            #expect(output.contains("would write \(file)"), "\(file) missing from: \(output)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(Self.root)/Sources/Backoffice/Samples"))
    }
}
