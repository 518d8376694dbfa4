import Foundation
import BackofficePlatform

/// How the screen reads one Unicode scalar of a post: a letter of the Latin skeleton (a–z), a
/// separator, or a boundary. Case, accents, compatibility forms (full-width, mathematical
/// letters, ligatures) and common confusables (Cyrillic and Greek look-alikes) fold to the letter
/// they look like; digits and a few symbols stand for letters only inside a word (l33t).
///
/// The code is one byte: `1...26` a letter, `27` a letter outside the skeleton (it never matches a
/// term but is part of a word), `28` a space, `29` a joiner (punctuation or an invisible character
/// inside a word: "b.a.d", zero-width spaces), `30` ignorable (combining marks), `31` an
/// expansion (ß → ss, æ → ae), `64 | letter` a digit or symbol that is a letter next to a letter
/// (`0`, `3`, `$`, `@`), `128 | letter` a symbol that is a letter only between two (`!`, `|`).
/// Anything else (`0`) is a boundary.
enum Glyph {
    static let otherLetter: UInt8 = 27
    static let space: UInt8 = 28
    static let joiner: UInt8 = 29
    static let ignorable: UInt8 = 30
    static let expansion: UInt8 = 31
    static let leet: UInt8 = 64
    static let between: UInt8 = 128

    /// The folding table for the Basic Multilingual Plane and the letters of its expansions (ß, æ,
    /// œ, ligatures), built once per process.
    private static let tables: (codes: [UInt8], expansions: [UInt32: [UInt8]]) = {
        var codes = [UInt8](repeating: 0, count: 0x1_0000)
        var expansions: [UInt32: [UInt8]] = [:]
        for value in 0..<UInt32(0x1_0000) {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let code = classify(scalar)
            codes[Int(value)] = code
            if code == expansion { expansions[value] = lettersOf(scalar) }
        }
        return (codes, expansions)
    }()

    /// Builds the tables now (start-up) rather than on the first screen.
    static func prepare() { _ = tables.codes.count }

    /// The Basic Multilingual Plane's codes, by scalar value (read once per text, not per scalar).
    static var codes: [UInt8] { tables.codes }

    /// The code of `scalar` (the table for the BMP, computed for the rest).
    @inline(__always)
    static func code(_ scalar: Unicode.Scalar) -> UInt8 {
        scalar.value < 0x1_0000 ? tables.codes[Int(scalar.value)] : classify(scalar)
    }

    /// The letters of an expansion code's scalar (computed outside the BMP).
    static func expanded(_ scalar: Unicode.Scalar) -> [UInt8] {
        tables.expansions[scalar.value] ?? lettersOf(scalar) ?? []
    }

    private static func letter(_ ascii: UInt8) -> UInt8 { ascii - 0x60 }  // "a" → 1

    /// The code of an ASCII character.
    private static func ascii(_ byte: UInt8) -> UInt8 {
        switch byte {
        case 0x61...0x7A: return letter(byte)
        case 0x41...0x5A: return letter(byte + 0x20)
        case 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D: return space
        case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "'"), UInt8(ascii: "`"),
            UInt8(ascii: "~"), UInt8(ascii: "*"), UInt8(ascii: "^"):
            return joiner
        default: break
        }
        let character = Character(Unicode.Scalar(byte))
        if let stands = leetLetters[character] { return leet | letter(stands.asciiValue!) }
        if let stands = betweenLetters[character] { return between | letter(stands.asciiValue!) }
        return 0
    }

    /// Digits and symbols that stand for a letter next to a letter ("h3ll0", "$hit").
    private static let leetLetters: [Character: Character] = [
        "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g", "@": "a", "$": "s",
    ]
    /// Symbols that stand for a letter only between two letters ("sh!t", not "damn!").
    private static let betweenLetters: [Character: Character] = ["!": "i", "|": "i", "+": "t"]

    /// Look-alikes that no normalization folds: Cyrillic and Greek letters drawn like Latin ones,
    /// and Latin letters without a decomposition.
    private static let confusables: [Unicode.Scalar: String] = {
        var map: [Unicode.Scalar: String] = [:]
        let pairs: [(String, String)] = [
            ("аАɑα", "a"), ("вВβΒЬ", "b"), ("сСϲ", "c"), ("ԁđð", "d"), ("еЕёЁεΕ", "e"), ("ɡ", "g"),
            ("нНΗ", "h"), ("іІїЇιΙıɩ", "i"), ("јЈ", "j"), ("кКκΚ", "k"), ("ł", "l"), ("мМΜ", "m"),
            ("ηΝ", "n"), ("оОοΟσøØ", "o"), ("рРρΡ", "p"), ("ԛ", "q"), ("ѕЅ", "s"), ("тТτΤ", "t"),
            ("υ", "u"), ("ν", "v"), ("ԝω", "w"), ("хХχΧ", "x"), ("уУΥ", "y"), ("Ζ", "z"), ("ß", "ss"),
            ("æÆ", "ae"), ("œŒ", "oe"),
        ]
        for (lookAlikes, letters) in pairs {
            for scalar in lookAlikes.unicodeScalars { map[scalar] = letters }
        }
        return map
    }()

    /// The skeleton letters `scalar` stands for, or nil when it is not a letter of the skeleton.
    private static func lettersOf(_ scalar: Unicode.Scalar) -> [UInt8]? {
        if let letters = confusables[scalar] { return letters.utf8.map(letter) }
        var letters: [UInt8] = []
        for part in String(scalar).decomposedStringWithCompatibilityMapping.unicodeScalars {
            if part.properties.generalCategory == .nonspacingMark { continue }
            if let mapped = confusables[part] {
                letters += mapped.utf8.map(letter)
            } else if part.isASCII, case let code = ascii(UInt8(part.value)), (1...26).contains(code) {
                letters.append(code)
            } else {
                return nil
            }
        }
        return letters.isEmpty ? nil : letters
    }

    /// The code of any scalar (the table's source).
    private static func classify(_ scalar: Unicode.Scalar) -> UInt8 {
        if scalar.isASCII { return ascii(UInt8(scalar.value)) }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return ignorable
        case .format: return joiner
        case .spaceSeparator, .lineSeparator, .paragraphSeparator: return space
        default: break
        }
        if properties.isWhitespace { return space }
        if scalar == "€" { return leet | letter(UInt8(ascii: "e")) }
        if scalar == "’" || scalar == "·" || scalar == "‐" || scalar == "‑" { return joiner }
        if let letters = lettersOf(scalar) { return letters.count == 1 ? letters[0] : expansion }
        // a compatibility form of an ASCII digit, symbol or separator (full-width "１", "．")
        let compatible = String(scalar).decomposedStringWithCompatibilityMapping.unicodeScalars
        if compatible.count == 1, let only = compatible.first, only.isASCII { return ascii(UInt8(only.value)) }
        return properties.isAlphabetic ? otherLetter : 0
    }
}
