import BackofficeConsole
import BackofficePlatform
import Foundation

/// Markdown as the app shows it: rendered by cmark-gfm (`CommonMark`), then passed through
/// `HTMLSanitizer`, so that whatever a writer types (raw HTML included) reaches readers as inert
/// markup. Every step is linear in the text and uses no recursion per character.
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
        html = HTMLSanitizer.sanitize(CommonMark.html(markdown)).trimmingCharacters(in: .newlines)
        words = Self.countWords(Self.visibleText(html))
        readingMinutes = max(1, (words + Self.wordsPerMinute - 1) / Self.wordsPerMinute)
    }

    /// The text of sanitised `html`, in one pass: each tag a space, character references decoded (a
    /// named one other than an apostrophe or ampersand as a space, which is all a word count needs).
    static func visibleText(_ html: String) -> String {
        var text = String.UnicodeScalarView()
        var scalars = html.unicodeScalars[...]
        while let first = scalars.popFirst() {
            switch first {
            case "<":
                text.append(" ")
                scalars = scalars.drop { $0 != ">" }.dropFirst()
            case "&":
                // A reference is at most 32 scalars up to its `;` (the sanitiser escapes any other `&`).
                let body = scalars.prefix(33).prefix { $0 != ";" }
                guard body.count < scalars.prefix(33).count else {
                    text.append(first)
                    continue
                }
                scalars = scalars.dropFirst(body.count + 1)
                text.append(contentsOf: reference(String(String.UnicodeScalarView(body))).unicodeScalars)
            default: text.append(first)
            }
        }
        return String(text)
    }

    /// The text a character reference's `name` (without `&` and `;`) stands for, as far as words go.
    private static func reference(_ name: String) -> String {
        let code =
            name.hasPrefix("#x") || name.hasPrefix("#X")
            ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
        if let code { return code > 0 ? Unicode.Scalar(code).map { String(Character($0)) } ?? " " : " " }
        return ["apos": "'", "rsquo": "’", "amp": "&"][name] ?? " "
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
