import Foundation
import Ink

/// Markdown as the app shows it: rendered by Ink, then passed through `HTMLSanitizer`, so that
/// whatever a writer types (raw HTML included) reaches readers as inert markup.
package struct SafeMarkdown: Sendable, Equatable, SanitizedMarkup {
    /// The sanitised HTML.
    package let html: String
    /// Words a reader sees (runs of letters or digits in the sanitised HTML's text: what the
    /// sanitiser removed, a script's text or a tag's name, is not counted).
    package let words: Int
    /// Minutes to read at 200 words a minute, rounded up, at least 1.
    package let readingMinutes: Int

    package static let wordsPerMinute = 200

    package init(_ markdown: String) {
        html = HTMLSanitizer.sanitize(MarkdownParser().html(from: Self.guarded(markdown)))
        words = Self.countWords(Self.visibleText(html))
        readingMinutes = max(1, (words + Self.wordsPerMinute - 1) / Self.wordsPerMinute)
    }

    /// `markdown` in a form Ink 0.6.0 reads to its end. Ink loops for ever on some inputs, so:
    /// - lines of only spaces and tabs are made empty (they are blank lines either way), and white space at the
    ///   end is removed (`* a\n\t` and `---\n ` never return);
    /// - when a `<p` follows the last `>`, an empty comment is added after the text: Ink stops a paragraph
    ///   before `<p` and needs a `>` after it to read a tag (JohnSundell/Ink#58); the sanitiser removes it.
    static func guarded(_ markdown: String) -> String {
        var text = markdown.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" } ? "" : line
        }.joined(separator: "\n")
        while let last = text.last, last.isWhitespace { text.removeLast() }
        let tail = text.lastIndex(of: ">").map { text[$0...] } ?? text[...]
        return tail.range(of: "<p", options: .caseInsensitive) == nil ? text : text + "\n\n<!-- -->"
    }

    /// The text of sanitised `html`: each tag a space, character references decoded (a named one
    /// other than an apostrophe or ampersand as a space, which is all a word count needs).
    static func visibleText(_ html: String) -> String {
        html.replacing(#/<[^>]*>/#, with: " ").replacing(#/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{1,31});/#) {
            let name = $0.output.1
            let code =
                name.hasPrefix("#x") || name.hasPrefix("#X")
                ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
            if let code { return code > 0 ? Unicode.Scalar(code).map { String(Character($0)) } ?? " " : " " }
            return ["apos": "'", "rsquo": "’", "amp": "&"][String(name)] ?? " "
        }
    }

    /// Runs of letters or digits (an apostrophe or hyphen inside a word keeps it one word).
    static func countWords(_ text: String) -> Int {
        var count = 0
        var inWord = false
        var previousJoiner = false
        for scalar in text.unicodeScalars {
            let letter = scalar.properties.isAlphabetic || scalar.properties.numericType != nil
            if letter {
                if !inWord { count += 1 }
                inWord = true
                previousJoiner = false
            } else if inWord, !previousJoiner, scalar == "'" || scalar == "’" || scalar == "-" {
                previousJoiner = true
            } else {
                inWord = false
                previousJoiner = false
            }
        }
        return count
    }
}
