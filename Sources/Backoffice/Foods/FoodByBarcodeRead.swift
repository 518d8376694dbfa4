import BackofficePlatform
import Foundation
import NIOCore

/// The app's barcode scan (`GET /v1/foods/by-barcode/{gtin}`) on the hand-encoded path: the same
/// use case (`FoodByBarcode`), its answer written by `LiveFoodJSON` (the generated encoder's bytes,
/// a test holding the two equal), 304 when the app holds the food's live version.
extension HotList {
    static let foodByBarcode = HotList(route: "/v1/foods/by-barcode/{gtin}", plans: .auto) {
        segments, _, database, context in
        let gtin = String(segments[0]).removingPercentEncoding ?? String(segments[0])
        let food = try await database.read(FoodByBarcode(gtin: gtin), context: context)
        return HotPage(etag: food.entityTag) { LiveFoodJSON.food(food) }
    }
}

/// Writes a live food as JSON by hand, as the generated encoder does (keys sorted, absent values
/// omitted).
enum LiveFoodJSON {
    static func food(_ food: LiveFood) -> ByteBuffer {
        let f = food.facts
        var out = JSONBytes(capacity: 512)
        out.raw("{\"allergens\":")
        out.strings(f.allergens.map(\.rawValue))
        out.optional(",\"brand\":", f.brand)
        out.optional(",\"carbohydrates_100g\":", f.carbohydrates)
        out.raw(",\"energy_kcal_100g\":")
        out.number(f.energyKcal)
        out.optional(",\"fat_100g\":", f.fat)
        out.optional(",\"fiber_100g\":", f.fiber)
        out.optional(",\"gtin\":", food.gtin?.description)
        out.raw(",\"id\":")
        out.uuid(food.id)
        out.raw(",\"name\":")
        out.string(f.name)
        out.optional(",\"proteins_100g\":", f.proteins)
        out.optional(",\"salt_100g\":", f.salt)
        out.optional(",\"saturated_fat_100g\":", f.saturatedFat)
        out.optional(",\"serving_grams\":", f.servingGrams)
        out.optional(",\"sugars_100g\":", f.sugars)
        out.raw(",\"version\":")
        out.integer(Int64(food.version))
        out.raw("}")
        return ByteBuffer(bytes: out.bytes)
    }
}
