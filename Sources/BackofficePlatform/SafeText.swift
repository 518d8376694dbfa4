import Foundation

/// Text from the service made safe to open where people look at it (the CLI's table and CSV
/// output): data written by one party must not run as a formula or a terminal escape for another.
package enum SafeText {
    /// A table cell: ANSI escape sequences removed, every other control character (C0, DEL, C1)
    /// replaced by a space, so a cell cannot move the cursor, recolour or retitle the terminal.
    package static func terminal(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        let withoutEscapes = text.replacingOccurrences(
            of: "\u{1B}\\[[0-?]*[ -/]*[@-~]|\u{1B}\\][^\u{07}\u{1B}]*(\u{07}|\u{1B}\\\\)?", with: "",
            options: .regularExpression)
        var scalars = String.UnicodeScalarView()
        for scalar in withoutEscapes.unicodeScalars { scalars.append(isControl(scalar) ? " " : scalar) }
        return String(scalars)
    }

    /// A CSV cell: a value a spreadsheet would run as a formula (it starts with `=`, `+`, `-`,
    /// `@`, tab or carriage return, after any apostrophes) is neutralised with a leading `'` (a
    /// plain negative number is left as it is); then quoted per RFC 4180 when needed. The
    /// apostrophes count, so `csvValue` can take exactly the one added back off.
    package static func csvCell(_ text: String) -> String {
        var cell = text
        // a negative number stays a number
        let isNumber = cell.range(of: #"^-?[0-9]+(\.[0-9]+)?$"#, options: .regularExpression) != nil
        if !isNumber, startsFormula(afterApostrophes: cell) { cell = "'" + cell }
        guard cell.contains(",") || cell.contains("\"") || cell.contains("\n") || cell.contains("\r") else {
            return cell
        }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A CSV cell's value as `csvCell` wrote it (already unquoted by the reader): the `'` that
    /// neutralised a formula taken off, so what an export writes an import reads back as it was
    /// (a value of its own that starts with `'=` was written `''=`).
    package static func csvValue(_ cell: String) -> String {
        guard cell.unicodeScalars.first == "'", startsFormula(afterApostrophes: cell) else { return cell }
        return String(cell.dropFirst())
    }

    /// Whether `text`, past any leading apostrophes, starts with what a spreadsheet reads as a formula.
    private static func startsFormula(afterApostrophes text: String) -> Bool {
        guard let first = text.unicodeScalars.first(where: { $0 != "'" }) else { return false }
        return formulaPrefixes.contains(first)
    }

    /// What a spreadsheet reads as the start of a formula.
    private static let formulaPrefixes = "=+-@\t\r".unicodeScalars

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
