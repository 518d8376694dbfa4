import BackofficePlatform

/// A Global Trade Item Number: the digits under a barcode, GTIN-8 (EAN-8), GTIN-12 (UPC-A),
/// GTIN-13 (EAN-13) or GTIN-14, the last digit a check digit (GS1's: from the right, the other
/// digits weighted 3, 1, 3, …; the check digit brings the sum to a multiple of 10). Kept in its
/// 14-digit form (zeros in front, as GS1 compares them), so a UPC-A and the EAN-13 that is the
/// same number with a zero in front are one barcode, and a duplicate is found whichever is typed.
package struct GTIN: Hashable, Sendable, CustomStringConvertible {
    /// The 14 digits.
    package let digits: String

    /// Why a text is not a GTIN.
    package enum Refusal: String, Error, Sendable {
        /// Not 8, 12, 13 or 14 characters.
        case length = "invalid_gtin_length"
        /// A character other than 0–9.
        case characters = "invalid_gtin_characters"
        /// The last digit is not the check digit of the others.
        case checkDigit = "invalid_check_digit"

        package var message: String {
            switch self {
            case .length: "must be 8, 12, 13 or 14 digits (GTIN-8, UPC-A, EAN-13, GTIN-14)"
            case .characters: "must be digits only"
            case .checkDigit: "the last digit is not the check digit of the others (a digit mistyped?)"
            }
        }
    }

    /// The GTIN `text` names (spaces around it ignored).
    /// - Throws: `Refusal`.
    package init(validating text: some StringProtocol) throws(Refusal) {
        let bytes = Array(text.utf8).drop { $0 == 0x20 }.reversed().drop { $0 == 0x20 }.reversed()
        guard bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { throw .characters }
        guard [8, 12, 13, 14].contains(bytes.count) else { throw .length }
        let values = bytes.map { Int($0 - 0x30) }
        guard Self.checkDigit(of: values.dropLast()) == values.last else { throw .checkDigit }
        digits = String(repeating: "0", count: 14 - values.count) + String(decoding: bytes, as: UTF8.self)
    }

    /// The GTIN `text` names, or nil.
    package init?(_ text: some StringProtocol) {
        guard let gtin = try? GTIN(validating: text) else { return nil }
        self = gtin
    }

    /// The check digit of `body` (the digits before it): weights 3, 1, 3, … from the right.
    package static func checkDigit(of body: some BidirectionalCollection<Int>) -> Int {
        let sum = body.reversed().enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 3 : 1) }
        return (10 - sum % 10) % 10
    }

    /// As printed under the barcode: the 14 digits without the zeros GTIN-8, -12 and -13 gained
    /// (8 digits when six zeros lead, else 12 or 13 as the digits allow).
    package var description: String {
        if digits.hasPrefix("000000") { return String(digits.dropFirst(6)) }
        if digits.hasPrefix("00") { return String(digits.dropFirst(2)) }
        if digits.hasPrefix("0") { return String(digits.dropFirst(1)) }
        return digits
    }
}
