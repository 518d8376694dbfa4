import Testing

@testable import Backoffice

@Suite("GTIN: check digits at every length, the 14-digit form, and every single-digit mistake refused")
struct GTINTests {
    /// Published examples: GS1's and the barcodes' own (EAN-8, UPC-A, EAN-13, GTIN-14).
    static let valid = ["96385074", "036000291452", "4006381333931", "10614141000415", "3017620422003"]

    @Test("the published examples at each length are valid, kept as 14 digits, and printed as given")
    func published() throws {
        for text in Self.valid {
            let gtin = try GTIN(validating: text)
            #expect(gtin.digits.count == 14 && gtin.digits.hasSuffix(text), "\(text)")
            #expect(gtin.description == text, "\(text) printed as \(gtin.description)")
        }
        #expect(try GTIN(validating: " 96385074 ").digits == "00000096385074", "spaces around are ignored")
    }

    @Test("a UPC-A and the EAN-13 and GTIN-14 that are the same number with zeros in front are one GTIN")
    func forms() throws {
        let upc = try GTIN(validating: "036000291452")
        #expect(try GTIN(validating: "0036000291452") == upc)
        #expect(try GTIN(validating: "00036000291452") == upc)
    }

    @Test("each length's example with its last digit changed is refused for its check digit; other lengths for length")
    func invalid() {
        for text in Self.valid {
            let last = Int(String(text.last!))!
            let wrong = String(text.dropLast()) + String((last + 1) % 10)
            #expect(throws: GTIN.Refusal.checkDigit, "\(wrong)") { try GTIN(validating: wrong) }
        }
        for length in [0, 1, 7, 9, 10, 11, 15, 18] {
            #expect(throws: GTIN.Refusal.length, "\(length) digits") {
                try GTIN(validating: String(repeating: "0", count: length))
            }
        }
        let foreign = ["4006381333931x", "40063813-3931", "400638133393١", "４００６３８１３３３９３１", "4006381333931\u{0}"]
        for text in foreign {
            #expect(throws: GTIN.Refusal.characters, "\(text.debugDescription)") { try GTIN(validating: text) }
        }
    }

    @Test(
        "property: random numbers of every length are valid with their check digit, and refused with one digit mistyped"
    )
    func everySingleDigitMistake() throws {
        var generator = SystemRandomNumberGenerator()
        for length in [8, 12, 13, 14] {
            for _ in 0..<200 {
                let body = (0..<(length - 1)).map { _ in Int.random(in: 0...9, using: &generator) }
                let digits = body + [GTIN.checkDigit(of: body)]
                let text = digits.map(String.init).joined()
                #expect(GTIN(text) != nil, "\(text)")
                let position = Int.random(in: 0..<length, using: &generator)
                var mistyped = digits
                mistyped[position] = (digits[position] + Int.random(in: 1...9, using: &generator)) % 10
                #expect(GTIN(mistyped.map(String.init).joined()) == nil, "\(text) mistyped at \(position)")
            }
        }
    }
}
