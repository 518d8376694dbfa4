import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console desk: foods and recipes written, refused in place, reviewed and kept to their writer")
struct ConsoleDeskTests {
    static let food: [String: String] = [
        "gtin": "4006381333931", "name": "Spelt crackers", "brand": "Northfield", "serving_grams": "30",
        "energy_kcal_100g": "402", "fat_100g": "9", "carbohydrates_100g": "66", "proteins_100g": "12",
        "allergens_gluten": "yes",
    ]

    /// The id in a `/console/<kind>/{id}` redirect.
    private func recordID(_ reply: Reply, _ kind: String) throws -> String {
        let location = try #require(reply.location, "a redirect")
        return String(location.dropFirst("/console/\(kind)/".count))
    }

    @Test(
        """
        a food's number that is not one, a wrong check digit and saturated fat over fat are each refused next \
        to its field with the values kept, nothing stored; a good one is a draft audited via console; a stale \
        edit is refused; another expert's food is 404; the manager's queue lists it and approval makes it live
        """
    )
    func foods() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let expert = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.expert]?.operatorID)
                let editor = try await expert.get("/console/foods/new")
                #expect(editor.status == 200 && editor.text.contains("id=\"allergens_gluten\""))
                for (field, value, error) in [
                    ("energy_kcal_100g", "lots", "energy_kcal_100g-error"), ("gtin", "4006381333932", "gtin-error"),
                    ("saturated_fat_100g", "10", "saturated_fat_100g-error"),
                ] {
                    var sent = Self.food
                    sent[field] = value
                    let refused = try await expert.post("/console/foods/new", sent, csrf: editor.csrf)
                    #expect(refused.status == 422, "\(field) \(value)")
                    #expect(refused.text.contains("id=\"\(error)\""), "\(field): \(refused.text.prefix(300))")
                    #expect(refused.text.contains("value=\"Spelt crackers\""), "the values are kept")
                }
                #expect(try await env.ownerScalar("SELECT count(*) FROM foods", as: Int64.self) == 0)
                let saved = try await expert.post("/console/foods/new", Self.food, csrf: editor.csrf)
                #expect(saved.status == 303)
                let id = try recordID(saved, "foods")
                let page = try await expert.get("/console/foods/\(id)")
                #expect(page.text.contains("402 kcal") && page.text.contains("gluten"))
                let audited = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'foods.create' AND target_id = '\(id)' \
                    AND session_id IS NOT NULL
                    """, as: Int64.self)
                #expect(audited == 1)

                var changed = Self.food
                changed["name"] = "Spelt crackers, thin"
                changed["version"] = "\"1\""
                let edit = try await expert.get("/console/foods/\(id)/edit")
                #expect(try await expert.post("/console/foods/\(id)/edit", changed, csrf: edit.csrf).status == 303)
                let stale = try await expert.post("/console/foods/\(id)/edit", changed, csrf: edit.csrf)
                #expect(stale.status == 422 && stale.text.contains("id=\"editor-error\""), "version 1 is stale")
                #expect(try await env.ownerScalar("SELECT max(version) FROM food_versions", as: Int32.self) == 2)
                let submitted = try await expert.post(
                    "/console/foods/\(id)/submit", ["version": "\"2\""], csrf: edit.csrf)
                #expect(submitted.status == 303)

                _ = try await ArticlesAPITests.anotherExpert(env)
                let other = try #require(
                    try await env.ownerScalar(
                        "SELECT id FROM operators WHERE email = 'other-expert@test.example'", as: UUID.self))
                let stranger = try await ConsoleClient.signedIn(env, client, as: other)
                #expect(try await stranger.get("/console/foods/\(id)").status == 404, "another expert's food")
                #expect(!(try await stranger.get("/console/foods")).text.contains("Spelt crackers"))

                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let queue = try await manager.get("/console/foods")
                #expect(queue.text.contains("id=\"review-queue\"") && queue.text.contains("Spelt crackers, thin"))
                let approved = try await manager.post(
                    "/console/foods/\(id)/approve", ["version": "\"2\""], csrf: queue.csrf)
                #expect(approved.status == 303)
                #expect(
                    try await env.ownerScalar("SELECT live_version FROM foods", as: Int32.self) == 2, "live")
            }
        }
    }

    @Test(
        """
        a recipe's ingredient is named by its id, its barcode or its exact name: a name two live foods share \
        is refused in its row, an unknown one too, nothing stored; named by id it is saved with figures from \
        the foods; the editor of a saved recipe keeps each ingredient's food when its text is unchanged
        """
    )
    func recipes() async throws {
        try await TestEnvironment.with { env in
            for brand in ["Northfield", "Blue Coast"] {
                _ = try await RecipesTests.liveFood(env, FoodFacts(name: "Rolled oats", brand: brand, energyKcal: 372))
            }
            _ = try await RecipesTests.liveFood(env, FoodFacts(name: "Banana", servingGrams: 120, energyKcal: 89))
            let oats = try #require(
                try await env.ownerScalar(
                    "SELECT f.id FROM foods f JOIN food_versions v ON v.food_id = f.id WHERE v.brand = 'Northfield'",
                    as: UUID.self))
            try await env.withApp { client in
                let expert = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.expert]?.operatorID)
                let editor = try await expert.get("/console/recipes/new")
                var sent: [String: String] = [
                    "title": "Overnight oats", "summary": "Soaked oats.", "servings": "2", "tags": "breakfast",
                    "body": "Mix and chill.", "ingredient_0_food": "rolled OATS", "ingredient_0_quantity": "80",
                    "ingredient_0_unit": "g", "ingredient_2_food": "Banana", "ingredient_2_quantity": "1",
                    "ingredient_2_unit": "serving", "ingredient_3_food": "Kumquat", "ingredient_3_quantity": "1",
                    "ingredient_3_unit": "g",
                ]
                let refused = try await expert.post("/console/recipes/new", sent, csrf: editor.csrf)
                #expect(refused.status == 422)
                #expect(refused.text.contains("id=\"ingredient_0_food-error\""), "the shared name, in its row")
                #expect(refused.text.contains("id=\"ingredient_3_food-error\""), "the unknown food, in its row")
                #expect(!refused.text.contains("id=\"ingredient_2_food-error\""), "Banana is one live food")
                #expect(try await env.ownerScalar("SELECT count(*) FROM recipes", as: Int64.self) == 0)

                sent["ingredient_0_food"] = oats.uuidString
                sent["ingredient_3_food"] = nil
                sent["ingredient_2_unit"] = "cup"
                let unitless = try await expert.post("/console/recipes/new", sent, csrf: editor.csrf)
                #expect(unitless.status == 303, "a food's id is read too; \(unitless.text.prefix(300))")
                let id = try recordID(unitless, "recipes")
                let page = try await expert.get("/console/recipes/\(id)")
                // (80 g × 372 + 240 g × 89) / 100 / 2 servings = 255.6 kcal a serving
                #expect(page.text.contains("256 kcal"), "\(page.text.prefix(2000))")
                let edit = try await expert.get("/console/recipes/\(id)/edit")
                #expect(edit.text.contains("name=\"ingredient_0_id\" value=\"\(oats.text)\""))
                var again = Dictionary(uniqueKeysWithValues: try Self.formValues(edit.text))
                again["servings"] = "4"
                let saved = try await expert.post("/console/recipes/\(id)/edit", again, csrf: edit.csrf)
                #expect(saved.status == 303, "the unchanged rows keep their foods: \(Self.refusals(saved.text))")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(DISTINCT food_id) FROM recipe_ingredients WHERE version = 2", as: Int64.self) == 2
                )
            }
        }
    }

    /// The refusals a page shows next to its fields, for a failure's message.
    static func refusals(_ html: String) -> [Substring] {
        html.components(separatedBy: "class=\"field-error\"").dropFirst().map { $0.prefix(120) }
            + html.components(separatedBy: "class=\"error-summary\"").dropFirst().map { $0.prefix(200) }
    }

    /// The named fields' values of a form page (inputs, text areas, and selects' chosen option).
    static func formValues(_ html: String) throws -> [(String, String)] {
        let input = try Regex(#"<input[^>]*name="([^"]+)"[^>]*value="([^"]*)""#)
        let selected = try Regex(
            #"<select id="[^"]+" name="([^"]+)"[^>]*>(?:<option[^>]*>[^<]*</option>)*?<option value="([^"]*)" selected"#
        )
        var values: [(String, String)] = []
        for match in html.matches(of: input) {
            let name = String(match.output[1].substring ?? "")
            guard name != "_csrf" else { continue }
            values.append(
                (name, String(match.output[2].substring ?? "").replacingOccurrences(of: "&quot;", with: "\"")))
        }
        for match in html.matches(of: try Regex(#"<textarea id="[^"]+" name="([^"]+)"[^>]*>([^<]*)</textarea>"#)) {
            values.append((String(match.output[1].substring ?? ""), String(match.output[2].substring ?? "")))
        }
        for match in html.matches(of: selected) {
            values.append((String(match.output[1].substring ?? ""), String(match.output[2].substring ?? "")))
        }
        return values
    }
}
