import BackofficePlatform
import Mustache

/// Markup that an allow-list sanitiser wrote itself, every element and attribute rebuilt from
/// what it allows (`SafeMarkdown`), so it may stand in a page as it is.
package protocol SanitizedMarkup {
    var html: String { get }
}

/// Markup that is safe by construction: the literal parts of an `HTML` string are the program's
/// own markup, and every interpolated value is escaped (`&`, `<`, `>`, `"`, `'`) unless it is
/// `HTML` itself. The orders board's rows are written so, because Mustache looks up each name of
/// each row through dynamic casts and escapes character by character: the board spent two thirds
/// of its time there (docs/decisions/console-tables-in-swift.md).
///
/// A template inserts `HTML` with `{{{nameHTML}}}`, the one unescaped form the console allows, and
/// only for an `HTML` value: `ConsolePages.render` refuses a page that gives such a slot anything
/// else, so text never reaches the page unescaped.
package struct HTML: Sendable, Equatable, MustacheCustomRenderable, ExpressibleByStringInterpolation {
    private(set) var text: String

    /// A literal in the source: markup as it stands.
    package init(stringLiteral literal: String) { text = literal }

    package init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    /// Nothing.
    package static let empty: HTML = ""

    /// Markup a sanitiser rebuilt element by element (an article's body): as it is.
    package init(_ markup: some SanitizedMarkup) { text = markup.html }

    package var renderText: String { text }
    package var isNull: Bool { false }

    /// `parts` one after the other.
    package init(joining parts: some Sequence<HTML>) {
        text = ""
        for part in parts { text += part.text }
    }

    package struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var text = ""

        package init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        /// The literal parts: the program's own markup.
        package mutating func appendLiteral(_ literal: String) { text += literal }

        /// A value: escaped.
        package mutating func appendInterpolation(_ value: String) { HTML.escape(value, into: &text) }

        package mutating func appendInterpolation(_ value: Int) { text += String(value) }

        /// Markup made the same way: as it is.
        package mutating func appendInterpolation(_ value: HTML) { text += value.text }
    }

    /// Appends `value` to `text` with the five characters that can end an element or an
    /// attribute's value replaced by their references; byte by byte (they are ASCII, so a
    /// multi-byte character never contains one).
    package static func escape(_ value: String, into text: inout String) {
        let bytes = value.utf8
        var start = bytes.startIndex
        var index = start
        while index != bytes.endIndex {
            let reference: String? =
                switch bytes[index] {
                case UInt8(ascii: "&"): "&amp;"
                case UInt8(ascii: "<"): "&lt;"
                case UInt8(ascii: ">"): "&gt;"
                case UInt8(ascii: "\""): "&quot;"
                case UInt8(ascii: "'"): "&#39;"
                default: nil
                }
            if let reference {
                text += Substring(bytes[start..<index])
                text += reference
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        text += Substring(bytes[start..<bytes.endIndex])
    }
}
