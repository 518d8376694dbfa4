import BackofficePlatform
import Foundation

/// A piece of the experts' content that a recommendation features (the catalogs' featured lists):
/// a workout video, a recipe or an article, named `kind:id` as stored and as the contract sends it.
/// It reaches the customers the recommendation's audience selects.
package struct FeaturedItem: Sendable, Hashable {
    package enum Kind: String, Sendable, CaseIterable {
        case video, recipe, article

        /// Its place in `allCases`.
        var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    }

    package var kind: Kind
    package var id: UUID

    package init(kind: Kind, id: UUID) { (self.kind, self.id) = (kind, id) }

    /// `video:<uuid>` (any case); nil for anything else.
    package init?(text: String) {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let kind = Kind(rawValue: String(parts[0])), let id = UUID(uuidString: String(parts[1]))
        else { return nil }
        self.init(kind: kind, id: id)
    }

    /// `video:<uuid>`, the id in lower case.
    package var text: String { "\(kind.rawValue):\(id.text)" }

    /// How many pieces one recommendation features at most.
    static let limit = 10

    /// Refuses (422, each named `featured[i]`) pieces that are more than ten, not `kind:id`, named
    /// twice, or not live now (a draft, in review with nothing live, or archived).
    static func check(_ texts: [String], in unit: UnitOfWork) async throws {
        var validation = Validation()
        validation.require(texts.count <= limit, "featured", "too_many", "at most \(limit) pieces")
        var seen = Set<String>()
        for (index, text) in texts.enumerated() {
            validation.require(
                FeaturedItem(text: text) != nil, "featured[\(index)]", "invalid_item",
                "must be video:<id>, recipe:<id> or article:<id>")
            validation.require(seen.insert(text).inserted, "featured[\(index)]", "duplicate", "named twice")
        }
        try validation.check()
        let live = try await unit.all(
            """
            SELECT featured_title(u.item) IS NOT NULL FROM unnest(\(texts)::text[]) WITH ORDINALITY AS u(item, n)
            ORDER BY u.n
            """
        ) { try $0.decode(Bool.self) }
        for (index, isLive) in live.enumerated() {
            validation.require(isLive, "featured[\(index)]", "not_live", "must be live in the app")
        }
        try validation.check()
    }

    /// The live featured pieces of the recommendations aliased `r`, in their order, as a JSON array
    /// of `FeaturedContent` (a piece not live at the read is left out).
    static let liveColumn = """
        (SELECT coalesce(json_agg(json_build_object('kind', split_part(u.item, ':', 1), 'id', \
        split_part(u.item, ':', 2), 'title', u.title) ORDER BY u.n), '[]')::text \
        FROM (SELECT f.item, f.n, featured_title(f.item) AS title \
        FROM unnest(r.featured) WITH ORDINALITY AS f(item, n)) u WHERE u.title IS NOT NULL)
        """
}

/// A featured piece as the app's feed names it: its kind, id and live title.
package struct FeaturedContent: Sendable, Equatable, Decodable {
    package var kind: String
    package var id: UUID
    package var title: String
}

/// The live content a recommendation may feature (`recommendations.create`: for the compose
/// form), by kind, each piece's id and title in title order, at most 200 of each.
struct FeaturableContent: Query {
    static let action: Action = "recommendations.create"

    func read(in unit: UnitOfWork) async throws -> [FeaturedItem.Kind: [(id: UUID, title: String)]] {
        let rows = try await unit.all(
            """
            (SELECT 'video', w.id, v.title FROM videos w JOIN video_versions v
                ON v.video_id = w.id AND v.version = w.live_version
             WHERE w.state <> 'archived' ORDER BY v.title, w.id LIMIT 200)
            UNION ALL
            (SELECT 'recipe', r.id, v.title FROM recipes r JOIN recipe_versions v
                ON v.recipe_id = r.id AND v.version = r.live_version
             WHERE r.state <> 'archived' ORDER BY v.title, r.id LIMIT 200)
            UNION ALL
            (SELECT 'article', a.id, v.title FROM articles a JOIN article_versions v
                ON v.article_id = a.id AND v.version = a.live_version
             WHERE a.state <> 'archived' ORDER BY v.title, a.id LIMIT 200)
            """
        ) { try $0.decode((String, UUID, String).self) }
        var content: [FeaturedItem.Kind: [(id: UUID, title: String)]] = [:]
        for (kind, id, title) in rows {
            guard let kind = FeaturedItem.Kind(rawValue: kind) else { continue }
            content[kind, default: []].append((id, title))
        }
        return content
    }
}

/// Featured pieces as a recommendation's page names them (`recommendations.read`): kind and live
/// title, or that it is no longer live.
struct FeaturedTitles: Query {
    static let action: Action = "recommendations.read"
    let items: [String]

    func read(in unit: UnitOfWork) async throws -> [String] {
        try await unit.all(
            """
            SELECT split_part(u.item, ':', 1), featured_title(u.item)
            FROM unnest(\(items)::text[]) WITH ORDINALITY AS u(item, n) ORDER BY u.n
            """
        ) { row in
            let (kind, title) = try row.decode((String, String?).self)
            return "\(kind): " + (title ?? "no longer live")
        }
    }
}
