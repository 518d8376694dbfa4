import BackofficeAPI
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Food imports: Open Food Facts' columns, errors by line, dry run, all or nothing, approved by a second person")
struct FoodsImportTests {
    func importFile(_ client: any TestClientProtocol, _ token: String, _ text: String, query: String = "")
        async throws -> Reply
    {
        try await client.send(
            .post, "/v1/foods/import\(query)", token: token, bytes: Array(text.utf8),
            headers: ["Content-Type": "text/csv"])
    }

    /// Open Food Facts' columns, some the import ignores (`url`, `countries`), and a row per rule broken.
    static let csv = """
        code,url,product_name,brands,countries,energy-kcal_100g,energy_100g,fat_100g,saturated-fat_100g,\
        carbohydrates_100g,sugars_100g,proteins_100g,salt_100g,allergens_tags,serving_quantity
        3017620422003,https://world.openfoodfacts.org/product/3017620422003,"Hazelnut spread, cocoa",Ferrero,France,\
        539,,30.9,10.6,57.5,56.3,6.3,0.107,"en:milk,en:nuts,en:soybeans",15
        96385074,,Sparkling water,,,,0,0,,0,,0,0,,
        96385075,,Bad check digit,,,10,,,,,,,,,
        036000291452,,Kilojoules only,,,,1000,1,,50,,5,,,
        0036000291452,,Same barcode as the line before,,,100,,,,,,,,,
        4006381333931,,Too much fat,,,950,,120,,,,,,,
        10614141000415,,Unknown allergen,,,100,,,,,,,,en:kiwi,
        ,,No barcode,,,100,,,,,,,,,
        5449000000996,,Not a number,,,abc,,,,,,,,,
        """

    @Test(
        """
        a CSV in Open Food Facts' columns: good rows land in review as one import, bad ones are listed by line \
        and column; a dry run and an all-or-nothing refusal change nothing; the same file tab-separated reads the same
        """
    )
    func errorsByLine() async throws {
        try await TestEnvironment.with { env in
            let expert = env.fixture.tokens[.expert]!
            try await env.withApp { client in
                let dry = try await importFile(client, expert, Self.csv, query: "?dry_run=true")
                #expect(dry.status == 200 && dry.json["created"] as? Int == 3, "\(dry.text)")
                #expect(dry.json["import_id"] == nil)
                let strict = try await importFile(client, expert, Self.csv, query: "?all_or_nothing=true")
                #expect(strict.status == 422 && strict["code"] == "import_rejected", "\(strict.text)")
                #expect(
                    (try await client.call(.get, "/v1/foods", token: expert).json["items"] as? [Any])?.isEmpty == true)

                let tabs = Self.csv.replacingOccurrences(of: "\"Hazelnut spread, cocoa\"", with: "Hazelnut spread")
                    .replacingOccurrences(of: "\"en:milk,en:nuts,en:soybeans\"", with: "en:milk;")
                    .replacingOccurrences(of: ",", with: "\t").replacingOccurrences(of: ";", with: ",")
                let tabbed = try await importFile(client, expert, tabs, query: "?dry_run=true")
                #expect(tabbed.status == 200 && tabbed.json["created"] as? Int == 3, "\(tabbed.text)")

                let reply = try await importFile(client, expert, Self.csv)
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["created"] as? Int == 3 && reply.json["rejected"] as? Int == 6, "\(reply.text)")
                let errors = (reply.json["errors"] as? [[String: Any]] ?? []).map {
                    "\($0["line"] ?? "?") \($0["field"] ?? "?") \($0["code"] ?? "?")"
                }
                #expect(
                    errors == [
                        "4 code invalid_check_digit", "6 code duplicate_code", "7 energy-kcal_100g out_of_range",
                        "7 fat_100g out_of_range", "7 carbohydrates_100g over_100g",
                        "8 allergens_tags unknown_allergen", "9 code required",
                        "10 energy-kcal_100g not_a_number", "10 energy-kcal_100g required",
                    ], "\(errors)")
                #expect(tabbed.json["rejected"] as? Int == 6)
                let foods = try await client.call(.get, "/v1/foods?state=in_review", token: expert)
                let names = (foods.json["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                #expect(Set(names) == ["Hazelnut spread, cocoa", "Sparkling water", "Kilojoules only"])
                let kilojoules = try #require(
                    (foods.json["items"] as? [[String: Any]])?.first { $0["name"] as? String == "Kilojoules only" })
                #expect(kilojoules["energy_kcal_100g"] as? Double == 239.01, "1000 kJ / 4.184 to 0.01 kcal")
                let events = try await env.ownerScalar(
                    "SELECT count(*) FROM audit_events WHERE action = 'foods.import'", as: Int.self)
                #expect(events == 1, "one audit event for the import, none for the dry run or the refusal")
            }
        }
    }

    @Test(
        """
        an import is approved whole by a second person: not by who made it (403 own_version), then once (409 \
        again); its foods go live for the app's scan, and a barcode it brought is taken for the next import
        """
    )
    func approval() async throws {
        try await TestEnvironment.with { env in
            let (expert, manager) = (env.fixture.tokens[.expert]!, env.fixture.tokens[.backendManager]!)
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let file = "code,product_name,energy-kcal_100g\n96385074,Sparkling water,0\n036000291452,Soup,45\n"
                let made = try await importFile(client, manager, file)
                let importID = try #require(made["import_id"], "\(made.text)")
                #expect(try await client.call(.get, "/v1/foods/by-barcode/96385074", token: app).status == 404)
                let own = try await client.call(.post, "/v1/food-imports/\(importID)/approve", token: manager)
                #expect(own.status == 403 && own["code"] == "own_version", "\(own.text)")
                let admin = env.fixture.tokens[.platformAdmin]!
                let approved = try await client.call(.post, "/v1/food-imports/\(importID)/approve", token: admin)
                #expect(approved.status == 200 && approved.json["approved"] as? Int == 2, "\(approved.text)")
                let twice = try await client.call(.post, "/v1/food-imports/\(importID)/approve", token: admin)
                #expect(twice.status == 409)
                #expect(
                    try await client.call(.get, "/v1/foods/by-barcode/96385074", token: app)["name"]
                        == "Sparkling water")
                #expect(
                    try await client.call(.post, "/v1/food-imports/\(importID)/approve", token: expert).status == 403)

                let again = try await importFile(client, expert, file)
                #expect(again.json["created"] as? Int == 0, "\(again.text)")
                let codes = (again.json["errors"] as? [[String: Any]] ?? []).map { $0["code"] as? String }
                #expect(codes == ["barcode_taken", "barcode_taken"])
            }
        }
    }

    /// A file of `count` foods with unique barcodes, every 997th with a wrong check digit (its line listed).
    static func file(of count: Int) -> (text: String, bad: [Int]) {
        var text = "code,product_name,brands,energy-kcal_100g,proteins_100g\n"
        var bad: [Int] = []
        for index in 0..<count {
            let body = (0..<12).map { _ in Int.random(in: 0...9) }
            var digits = String(format: "%07d", index).map { Int(String($0))! } + body.suffix(5)
            digits += [GTIN.checkDigit(of: digits)]
            var code = digits.map(String.init).joined()
            if index % 997 == 0 {
                code = String(code.dropLast()) + String((digits.last! + 1) % 10)
                bad.append(index + 2)
            }
            text += "\(code),Food \(index),Brand \(index % 50),\(index % 900),\(index % 40)\n"
        }
        return (text, bad)
    }

    @Test("an import of 100,000 foods: every good row in review, every bad one listed by its line, in one import")
    func hundredThousand() async throws {
        let (text, bad) = Self.file(of: 100_000)
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let reply = try await importFile(client, manager, text)
                #expect(reply.status == 200, "\(reply.text.prefix(500))")
                #expect(reply.json["created"] as? Int == 100_000 - bad.count)
                let lines = (reply.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["line"] as? Int }
                #expect(lines == bad)
                let stored = try await env.ownerScalar(
                    "SELECT count(*) FROM foods WHERE state = 'in_review' AND import_id IS NOT NULL", as: Int.self)
                #expect(stored == 100_000 - bad.count)
                let versions = try await env.ownerScalar("SELECT count(*) FROM food_versions", as: Int.self)
                #expect(versions == stored)
            }
        }
    }
}
