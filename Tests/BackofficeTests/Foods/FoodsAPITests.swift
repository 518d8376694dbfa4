import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Foods: review as the experts' content, barcodes one per food, the app's scan and search")
struct FoodsAPITests {
    static let oats = #"""
        {"gtin":"4006381333931","name":"Rolled oats","brand":"Mill & Co","serving_grams":40,
         "energy_kcal_100g":372,"fat_100g":7,"saturated_fat_100g":1.2,"carbohydrates_100g":58.7,
         "sugars_100g":1,"fiber_100g":10,"proteins_100g":13.5,"salt_100g":0.01,"allergens":["gluten"]}
        """#

    @Test(
        """
        an expert adds a food and submits it, never approves (403); the writer's manager cannot approve its own \
        version (403 own_version); approved, the app scans it by any form of its barcode, with an ETag (304), and \
        finds it by name; a partner reads nothing (403); another expert's food is 404
        """
    )
    func reviewAndRead() async throws {
        try await TestEnvironment.with { env in
            let expert = env.fixture.tokens[.expert]!
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let created = try await client.call(.post, "/v1/foods", token: expert, json: Self.oats)
                #expect(created.status == 201, "\(created.text)")
                #expect(created["state"] == "draft" && created["gtin"] == "4006381333931")
                let id = try #require(created["id"])
                let path = "/v1/foods/\(id)"
                #expect(try await client.call(.get, "/v1/foods/by-barcode/4006381333931", token: app).status == 404)
                #expect(try await client.call(.post, "\(path)/submit", token: expert)["state"] == "in_review")
                #expect(try await client.call(.post, "\(path)/approve", token: expert).status == 403)
                let approved = try await client.call(.post, "\(path)/approve", token: manager)
                #expect(approved["state"] == "published" && approved["live_version"] == "1", "\(approved.text)")

                let scanned = try await client.call(.get, "/v1/foods/by-barcode/04006381333931", token: app)
                #expect(scanned.status == 200 && scanned["name"] == "Rolled oats", "\(scanned.text)")
                #expect(scanned.json["allergens"] as? [String] == ["gluten"])
                #expect(scanned.json["proteins_100g"] as? Double == 13.5)
                let tag = try #require(scanned.headers[.eTag])
                let again = try await client.call(
                    .get, "/v1/foods/by-barcode/4006381333931", token: app, headers: ["If-None-Match": tag])
                #expect(again.status == 304)
                let found = try await client.call(.get, "/v1/foods/search?q=OATS", token: app)
                #expect((found.json["items"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
                let reordered = try await client.call(.get, "/v1/foods/search?q=oats%2C%20ROLLED", token: app)
                #expect((reordered.json["items"] as? [[String: Any]])?.count == 1, "each word, in any order")
                let part = try await client.call(.get, "/v1/foods/search?q=oat", token: app)
                #expect((part.json["items"] as? [Any])?.isEmpty == true, "a word matches whole")
                #expect(try await client.call(.get, "/v1/foods/search?q=%25%25%25", token: app).status == 422)

                let partner = env.fixture.partners[0].adminToken
                #expect(try await client.call(.get, "/v1/foods/search?q=oats", token: partner).status == 403)
                #expect(try await client.call(.get, path, token: partner).status == 403)
                let other = try await ArticlesAPITests.anotherExpert(env)
                #expect(try await client.call(.get, path, token: other).status == 404)

                // A new version by the manager: the writer of a version since the live one cannot approve it.
                let edited = try await client.call(
                    .patch, path, token: manager, json: #"{"proteins_100g":13.2}"#, headers: ["If-Match": "\"1\""])
                #expect(edited["version"] == "2" && edited["state"] == "draft", "\(edited.text)")
                #expect(try await client.call(.post, "\(path)/submit", token: manager)["state"] == "in_review")
                let own = try await client.call(.post, "\(path)/approve", token: manager)
                #expect(own.status == 403 && own["code"] == "own_version", "\(own.text)")
                let live = try await client.call(.get, "/v1/foods/by-barcode/4006381333931", token: app)
                #expect(
                    live.json["proteins_100g"] as? Double == 13.5, "the live version stays while the next is reviewed")
                let versions = try await client.call(.get, "\(path)/versions", token: expert)
                #expect((versions.json["items"] as? [[String: Any]])?.map { $0["version"] as? Int } == [2, 1])
            }
        }
    }

    @Test(
        """
        a barcode is refused naming why (length, characters, check digit) and changes nothing; a barcode a food \
        has already, in any of its forms, is 409 barcode_taken; figures out of range are named; an archived \
        food frees its barcode
        """
    )
    func barcodesAndFigures() async throws {
        try await TestEnvironment.with { env in
            let expert = env.fixture.tokens[.expert]!
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                func create(_ gtin: String, _ figures: String = #""energy_kcal_100g":100"#) async throws -> Reply {
                    try await client.call(
                        .post, "/v1/foods", token: expert, json: #"{"gtin":"\#(gtin)","name":"Milk",\#(figures)}"#)
                }
                for (gtin, code) in [
                    ("1234567", "invalid_gtin_length"), ("96385075", "invalid_check_digit"),
                    ("9638507٤", "invalid_gtin_characters"), ("036000291453", "invalid_check_digit"),
                ] {
                    let refused = try await create(gtin)
                    #expect(refused.status == 422, "\(gtin): \(refused.text)")
                    #expect(refused.text.contains(code), "\(gtin): \(refused.text)")
                }
                #expect(try await create("036000291452").status == 201)
                let taken = try await create("0036000291452")
                #expect(taken.status == 409 && taken["code"] == "barcode_taken", "\(taken.text)")
                let figures = try await create(
                    "96385074", #""energy_kcal_100g":950,"fat_100g":10,"saturated_fat_100g":12,"proteins_100g":-1"#)
                #expect(figures.status == 422)
                for field in ["energy_kcal_100g", "saturated_fat_100g", "proteins_100g"] {
                    #expect(figures.text.contains("\"\(field)\""), "\(field): \(figures.text)")
                }
                let list = try await client.call(.get, "/v1/foods", token: manager)
                #expect((list.json["items"] as? [Any])?.count == 1, "only the valid food was stored")

                let id = try #require((list.json["items"] as? [[String: Any]])?.first?["id"] as? String)
                let archived = try await client.call(
                    .post, "/v1/foods/\(id)/archive", token: manager, json: #"{"comment":"Wrong product"}"#)
                #expect(archived["state"] == "archived", "\(archived.text)")
                #expect(try await create("036000291452").status == 201, "an archived food's barcode is free")
            }
        }
    }
}
