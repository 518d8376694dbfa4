import Foundation
import Testing

@testable import BackofficePlatform

/// The boundary between the layers below (the platform, the console's shell) and the domains, held
/// where the compiler cannot hold it. The compiler refuses a platform or shell file that uses a
/// domain's type (their targets cannot import the domains'); these tests refuse what it lets
/// through: a domain's name in their code as a string, a metric label or an identifier of their
/// own, and the contract's domain types (they read the contract's document, never its generated types).
@Suite("The platform and the console's shell name no domain: not its types, not its words, not the contract's types")
struct BoundaryTests {
    /// Domain folders whose names are also the platform's words: the audit log, mail transport,
    /// tenancy and principals are the platform's; "messages", "orders" and "reports" are ordinary
    /// words (an error message, sort order), "plans" PostgreSQL's (a statement's plan); the
    /// composition root is no domain.
    static let sharedWords: Set<String> = [
        "Accounts", "Audit", "Mail", "Messages", "Orders", "Plans", "Reports", "Server", "Tenancy",
    ]

    /// The words that name a domain: each domain folder's name, lower-cased and singular
    /// (`Payments` → `payment`, `HealthProfiles` → `healthprofile`), and the words of a domain
    /// that its folder name does not carry.
    static func domainWords(folders: [String]) -> [String] {
        let stems = folders.filter { !sharedWords.contains($0) }.map { folder -> String in
            let lower = folder.lowercased()
            if lower.hasSuffix("ies") { return String(lower.dropLast(3)) }
            if lower.hasSuffix("s") && !lower.hasSuffix("ss") { return String(lower.dropLast()) }
            return lower
        }
        return (stems + ["webhook", "checkout", "ledger", "wallet"]).sorted()
    }

    /// Swift code with its comments removed (line comments and doc comments; string literals kept).
    static func code(of text: String) -> [(line: Int, code: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("//") { return nil }
            let code = line.range(of: " // ").map { String(line[..<$0.lowerBound]) } ?? String(line)
            return (index + 1, code)
        }
    }

    /// Where `code` names a domain: one of `words` inside an identifier or string (underscores
    /// ignored, any case), one of `types` as a whole token, or a type of the generated contract.
    static func namings(in code: String, words: [String], types: Set<String>) -> [String] {
        let folded = code.lowercased().replacingOccurrences(of: "_", with: "")
        var found = words.filter { folded.contains($0) }
        let tokens = code.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init)
        found += tokens.filter { types.contains($0) }
        if code.contains("Components.") || code.contains("Operations.") { found.append("the contract's types") }
        return found
    }

    /// The types the domains, the console and the demo declare at the top level of a file (nested
    /// ones, `Row` or `State`, are named inside their own types).
    static func domainTypes(in files: [String]) throws -> Set<String> {
        try types(
            in: files,
            #/^(?:(?:package|public|final|internal) )*(?:struct|enum|class|actor|protocol) ([A-Z]\w*)/#
                .anchorsMatchLineEndings())
    }

    /// Every type `files` declare, nested ones included.
    static func declaredTypes(in files: [String]) throws -> Set<String> {
        try types(in: files, #/(?:struct|enum|class|actor|protocol|typealias) ([A-Z]\w*)/#)
    }

    /// The names `declaration` captures in `files`.
    private static func types(in files: [String], _ declaration: Regex<(Substring, Substring)>) throws -> Set<String> {
        var types = Set<String>()
        for file in files {
            for match in try CodeShapeTests.text(file).matches(of: declaration) { types.insert(String(match.output.1)) }
        }
        return types
    }

    @Test(
        "no file of the platform or the console's shell names a domain's word or type, nor the contract's types",
        arguments: ["Sources/BackofficePlatform/", "Sources/BackofficeConsole/"])
    func layerNamesNoDomain(layer: String) throws {
        let root = CodeShapeTests.root
        let folders = try FileManager.default.contentsOfDirectory(atPath: "\(root)/Sources/Backoffice").sorted()
        #expect(folders.contains("Payments") && folders.contains("Moderation") && folders.contains("FitPoints"))
        let words = Self.domainWords(folders: folders)
        let above = CodeShapeTests.swiftFiles.filter {
            $0.hasPrefix("Sources/Backoffice/") || $0.hasPrefix("Sources/BackofficeDemo/")
        }
        let files = CodeShapeTests.swiftFiles.filter { $0.hasPrefix(layer) }
        // A name the layer declares itself (a nested `Settlement`) is its own, not a domain's; an
        // operator is the person every layer signs in and acts for (`Principal.operatorID`), the
        // people pages' `Operator` their record of one.
        let types = try Self.domainTypes(in: above).subtracting(Self.declaredTypes(in: files))
            .subtracting(["Operator"])
        #expect(types.contains("PaymentRefusal") && types.contains("ModerationPolicy"))
        var found: [String] = []
        #expect(files.count > 20)
        for file in files {
            for (line, code) in Self.code(of: try CodeShapeTests.text(file)) {
                for naming in Self.namings(in: code, words: words, types: types) {
                    found.append("\(file):\(line) names \(naming)")
                }
            }
        }
        #expect(found.isEmpty, "\(layer) names a domain: \(found.joined(separator: "; "))")
    }

    @Test("the scan finds a domain in a platform line however it is spelled, and leaves comments and shared words")
    func scanFindsWhatItLooksFor() {
        let words = Self.domainWords(folders: ["Payments", "HealthProfiles", "ContentPolicies", "Orders", "Audit"])
        #expect(words.contains("payment") && words.contains("healthprofile") && words.contains("contentpolic"))
        #expect(!words.contains("order") && !words.contains("audit"))
        let types: Set<String> = ["PaymentRefusal"]
        let cases = [
            "case paymentDeclined(code: String)", #"Counter(label: "backoffice_payment_calls_total")"#,
            #"let key = "health_profile_read_purposes""#, "throw PaymentRefusal.declined",
            "let row: Components.Schemas.Problem",
        ]
        for line in cases {
            #expect(!Self.namings(in: line, words: words, types: types).isEmpty, "missed: \(line)")
        }
        let allowed = ["ORDER BY created_at DESC", "let audit = AuditRecord()", "let order = 1"]
        for line in allowed {
            #expect(Self.namings(in: line, words: words, types: types).isEmpty, "flagged: \(line)")
        }
        let source = "/// The payment provider.\nlet x = 1 // a payment\n"
        #expect(Self.code(of: source).allSatisfy { Self.namings(in: $0.code, words: words, types: types).isEmpty })
    }

    @Test("ARCHITECTURE's targets and their arrows are Package.swift's, as `ops/targets` reads them")
    func targetsDrawnAsBuilt() async throws {
        let root = CodeShapeTests.root
        let (status, output) = try await offThePool {
            try ChildProcess.run(["\(root)/ops/targets", "--check", "\(root)/ARCHITECTURE.md"])
        }
        #expect(status == 0, "\(output)")
        let (_, drawn) = try await offThePool { try ChildProcess.run(["\(root)/ops/targets"]) }
        #expect(drawn.contains("BackofficePlatform  library     → BackofficeAPI\n"), "\(drawn)")
    }
}
