import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension ShopApplicationTests {
    @Test(
        "tax ids, routing numbers and slugs",
        arguments: [
            ("12-3456789", "12-3456789"), ("123456789", "12-3456789"), ("07-1234567", nil), ("1-23456789", nil),
            ("12-345678", nil),
            ("ab-cdefghi", nil), ("98-7654321", "98-7654321"),
        ])
    func employerIdentificationNumbers(_ text: String, _ expected: String?) {
        #expect(EmployerIdentificationNumber.normalized(text) == expected)
    }

    @Test("ABA routing numbers by their checksum; slugs from legal names")
    func routingNumbersAndSlugs() {
        #expect(BankAccount(holderName: "x", routingNumber: "110000000", accountNumber: "1").hasValidRoutingNumber)
        #expect(BankAccount(holderName: "x", routingNumber: "021000021", accountNumber: "1").hasValidRoutingNumber)
        #expect(!BankAccount(holderName: "x", routingNumber: "021000022", accountNumber: "1").hasValidRoutingNumber)
        #expect(!BankAccount(holderName: "x", routingNumber: "11000000", accountNumber: "1").hasValidRoutingNumber)
        #expect(ShopSlug.from("Northwind Sports, LLC") == "northwind-sports-llc")
        #expect(ShopSlug.from("  Ünïcode & Co. ") == "n-code-co")
        #expect(ShopSlug.from("Ω") == "shop")
        // Slugs and skus, checked without regular expressions, agree with the database's patterns.
        for (slug, valid) in [
            ("ab", true), ("a", false), ("-ab", false), ("a-", true), ("A1", false), ("ä1", false),
            (String(repeating: "a", count: 63), true),
            (String(repeating: "a", count: 64), false), ("9lives", true),
        ] {
            #expect(Validation.isSlug(slug) == valid, "\(slug)")
        }
        for (sku, valid) in [
            ("A", true), ("a.b_c-D9", true), (".a", false), ("a b", false), (String(repeating: "x", count: 64), true),
            (String(repeating: "x", count: 65), false), ("", false), ("é", false),
        ] {
            #expect(GoodFields.isSKU(sku) == valid, "\(sku)")
        }
    }
}
