import BackofficePlatform
import Foundation
import PostgresNIO

/// Foods in every state (`foods.list`), as `ListReviewed` lists reviewed content.
package typealias ListFoods = ListReviewed<Food>

/// One food, its newest version (`foods.read`); another writer's is 404 to an expert.
package typealias GetFood = GetReviewed<Food>

/// Every version of a food, newest first (`foods.read`).
package typealias FoodVersions = ReviewedVersions<Food>

/// A food as the app reads it: its live version's figures.
package struct LiveFood: Sendable, Equatable {
    package var id: UUID
    package var gtin: GTIN?
    package var version: Int
    package var facts: FoodFacts

    /// The live foods (alias `f`) with their live version (`v`): published, or a draft or in
    /// review again while the version before stays live; never archived.
    static let source = """
        foods f JOIN food_versions v ON v.food_id = f.id AND v.version = f.live_version
        """
    static let columns = "f.id, f.gtin, f.live_version, \(FoodFacts.columns)"
    static let isLive = "f.live_version IS NOT NULL AND f.state <> 'archived'"
}

extension LiveFood {
    init(row: PostgresRow) throws {
        let c = try row.decode((UUID, String?, Int).self)
        self.init(
            id: c.0, gtin: c.1.flatMap(GTIN.init), version: c.2, facts: try FoodFacts(row.makeRandomAccess(), from: 3))
    }
}

/// The live food a barcode names (`foods.published`), in one statement over the barcode's
/// index. Any of the GTIN's forms finds it (an EAN-13 with a zero in front finds the UPC-A).
/// - Throws: 422 for a text that is not a GTIN (naming why), 404 when no live food has it.
package struct FoodByBarcode: Query {
    package static let action: Action = "foods.published"
    let gtin: String
    package init(gtin: String) { self.gtin = gtin }

    package func read(in unit: UnitOfWork) async throws -> LiveFood {
        let barcode: GTIN
        do { barcode = try GTIN(validating: gtin) } catch {
            throw DomainError.invalid("gtin", error.rawValue, error.message)
        }
        let food = try await unit.first(
            """
            SELECT \(unescaped: LiveFood.columns) FROM \(unescaped: LiveFood.source)
            WHERE f.gtin = \(barcode.digits) AND \(unescaped: LiveFood.isLive)
            """, LiveFood.init(row:))
        guard let food else { throw DomainError.notFound("Food with the barcode \(barcode)") }
        return food
    }
}

/// Live foods by name (lower case) then id, a page after `after` (`foods.published`); with a
/// `text`, those whose live name has each of its words (runs of letters and digits, any case) as a
/// whole word. The work is bounded by the rarest word's bucket in the index of the live names'
/// words (`food_name_words`), read in name order, the other words matched in the bucket's names:
/// a common word costs a page, not its matches. A
/// text of more than 100 characters, or without a letter or digit, is 422.
package struct SearchFoods: Query {
    package static let action: Action = "foods.published"
    let text: String?
    let after: (name: String, id: UUID)?
    let limit: Int

    package init(text: String?, after: (name: String, id: UUID)?, limit: Int) {
        (self.text, self.after, self.limit) = (text?.trimmingCharacters(in: .whitespacesAndNewlines), after, limit)
    }

    /// How far a word's bucket is counted when choosing the rarest (a bucket this big or bigger is
    /// common: among those, the longest word is taken).
    static let countedTo = 2_001

    package func read(in unit: UnitOfWork) async throws -> [LiveFood] {
        guard let text else { return try await page(in: unit) }
        guard text.unicodeScalars.count <= 100 else {
            throw DomainError.invalid("q", "invalid_search", "must be at most 100 characters")
        }
        let words = try await unit.all(
            """
            SELECT w, (SELECT count(*) FROM (SELECT 1 FROM food_name_words x WHERE x.word = w
                LIMIT \(Self.countedTo)) c)::int
            FROM name_words(\(text)) w
            """
        ) { try $0.decode((String, Int).self) }
        guard let rarest = words.min(by: { ($0.1, -$0.0.count, $0.0) < ($1.1, -$1.0.count, $1.0) }) else {
            throw DomainError.invalid("q", "invalid_search", "must hold a letter or a digit")
        }
        guard rarest.1 > 0 else { return [] }
        // Each other word, as a whole word of the lower-cased name (words are letters and digits only).
        let others = words.map(\.0).filter { $0 != rarest.0 }.map { "(^|[^[:alnum:]])\($0)($|[^[:alnum:]])" }
        return try await unit.all(
            """
            SELECT \(unescaped: LiveFood.columns) FROM food_name_words w
            JOIN foods f ON f.id = w.food_id JOIN food_versions v ON v.food_id = f.id AND v.version = f.live_version
            WHERE w.word = \(rarest.0) AND \(unescaped: LiveFood.isLive)
              AND (\(after?.name)::text IS NULL OR (w.name, w.food_id) > (\(after?.name), \(after?.id)))
              AND w.name ~ ALL (\(others)::text[])
            ORDER BY w.name, w.food_id
            LIMIT \(limit)
            """, LiveFood.init(row:))
    }

    /// Every live food by name, a page after `after`.
    private func page(in unit: UnitOfWork) async throws -> [LiveFood] {
        try await unit.all(
            """
            SELECT \(unescaped: LiveFood.columns) FROM \(unescaped: LiveFood.source)
            WHERE \(unescaped: LiveFood.isLive)
              AND (\(after?.name)::text IS NULL OR (lower(v.name), v.food_id) > (\(after?.name), \(after?.id)))
            ORDER BY lower(v.name), v.food_id
            LIMIT \(limit)
            """, LiveFood.init(row:))
    }
}
