import Foundation

/// Text from the service made safe to open where people look at it (the CLI's table and CSV
/// output): data written by one party must not run as a formula or a terminal escape for another.
public enum SafeText {
    /// A table cell: ANSI escape sequences removed, every other control character (C0, DEL, C1)
    /// replaced by a space, so a cell cannot move the cursor, recolour or retitle the terminal.
    public static func terminal(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        let withoutEscapes = text.replacingOccurrences(
            of: "\u{1B}\\[[0-?]*[ -/]*[@-~]|\u{1B}\\][^\u{07}\u{1B}]*(\u{07}|\u{1B}\\\\)?", with: "", options: .regularExpression)
        var scalars = String.UnicodeScalarView()
        for scalar in withoutEscapes.unicodeScalars { scalars.append(isControl(scalar) ? " " : scalar) }
        return String(scalars)
    }

    /// A CSV cell: a leading `=`, `+`, `-`, `@`, tab or carriage return (which spreadsheets read as
    /// a formula) is neutralised with a leading `'` (a plain negative number is left as it is);
    /// then quoted per RFC 4180 when needed.
    public static func csvCell(_ text: String) -> String {
        var cell = text
        let isNumber = cell.range(of: #"^-?[0-9]+(\.[0-9]+)?$"#, options: .regularExpression) != nil  // a negative number stays a number
        if !isNumber, let first = cell.unicodeScalars.first, formulaPrefixes.contains(first) { cell = "'" + cell }
        guard cell.contains(",") || cell.contains("\"") || cell.contains("\n") || cell.contains("\r") else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A CSV cell's value as `csvCell` wrote it (already unquoted by the reader): the `'` that
    /// neutralised a formula prefix removed, so what an export writes an import reads back as it was.
    public static func csvValue(_ cell: String) -> String {
        let scalars = cell.unicodeScalars
        guard scalars.first == "'", let second = scalars.dropFirst().first, formulaPrefixes.contains(second) else { return cell }
        return String(cell.dropFirst())
    }

    /// What a spreadsheet reads as the start of a formula.
    private static let formulaPrefixes = "=+-@\t\r".unicodeScalars

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
