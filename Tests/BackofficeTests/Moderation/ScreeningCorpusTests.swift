import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// The screen against its labelled corpus (`screening-corpus.tsv`: expected action, class, text),
/// with the shipped term files. docs/domains.md reports the figures this test holds it to.
@Suite("Screening corpus (pure)")
struct ScreeningCorpusTests {
    struct Line {
        let expected: ScreenAction
        let kind: String
        let text: String
    }

    static func corpus() throws -> [Line] {
        let file = projectRoot.appendingPathComponent("Tests/BackofficeTests/Moderation/screening-corpus.tsv")
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { row in
            if row.hasPrefix("#") { return nil }
            let fields = row.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let expected = ScreenAction(rawValue: String(fields[0])) else {
                Issue.record("malformed corpus line: \(row)")
                return nil
            }
            return Line(expected: expected, kind: String(fields[1]), text: String(fields[2]))
        }
    }

    static let screen: Screen = {
        // swiftlint:disable:next force_try
        try! PolicySet.load(from: projectRoot.appendingPathComponent("policies")).moderation.screen
    }()

    @Test("the corpus has at least 200 labelled lines, both ways, and every obfuscation class")
    func corpusShape() throws {
        let lines = try Self.corpus()
        #expect(lines.count >= 200)
        #expect(lines.filter { $0.expected == .allow }.count >= 90)
        #expect(lines.filter { $0.expected != .allow }.count >= 90)
        let classes = Set(lines.map(\.kind))
        for kind in ["case", "confusable", "accent", "leet", "repeat", "separator", "space", "trap", "phrase"] {
            #expect(classes.contains(kind), "no line of class \(kind)")
        }
    }

    @Test("precision and recall on the corpus hold the documented figures (precision ≥ 0.98, recall ≥ 0.97)")
    func precisionAndRecall() throws {
        var (truePositives, falsePositives, falseNegatives, rightAction) = (0, 0, 0, 0)
        var misses: [String] = []
        let lines = try Self.corpus()
        for line in lines {
            let verdict = Self.screen.screen(line.text)
            let flagged = verdict.action != .allow
            let expected = line.expected != .allow
            if flagged && expected { truePositives += 1 }
            if flagged && !expected { falsePositives += 1 }
            if !flagged && expected { falseNegatives += 1 }
            if verdict.action == line.expected {
                rightAction += 1
            } else {
                misses.append("\(line.expected.rawValue)→\(verdict.action.rawValue) [\(line.kind)] \(line.text)")
            }
        }
        let precision = Double(truePositives) / Double(truePositives + falsePositives)
        let recall = Double(truePositives) / Double(truePositives + falseNegatives)
        print(
            "screening corpus: \(lines.count) lines, precision \(precision), recall \(recall), "
                + "right action \(rightAction)/\(lines.count)\n  " + misses.joined(separator: "\n  "))
        #expect(precision >= 0.98)
        #expect(recall >= 0.97)
    }

    @Test("every obfuscation class is caught on most of its lines (≥ 80% each)")
    func everyClass() throws {
        let lines = try Self.corpus().filter { $0.expected != .allow }
        for (kind, group) in Dictionary(grouping: lines, by: \.kind) {
            let caught = group.filter { Self.screen.screen($0.text).action == $0.expected }.count
            #expect(Double(caught) / Double(group.count) >= 0.8, "class \(kind): \(caught) of \(group.count)")
        }
    }
}
