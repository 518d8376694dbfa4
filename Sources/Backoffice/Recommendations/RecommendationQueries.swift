import BackofficePlatform
import Foundation
import PostgresNIO

/// Recommendations in every status (`recommendations.list`), most recently changed first.
package struct ListRecommendations: Query {
    package static let action: Action = "recommendations.list"
    let status: Recommendation.Status?
    let after: (createdAt: Date, id: UUID)?
    let limit: Int

    /// `after` is the keyset of `newestFirstPage`: the last row's change time and id.
    package init(status: Recommendation.Status?, after: (createdAt: Date, id: UUID)?, limit: Int) {
        (self.status, self.after, self.limit) = (status, after, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [Recommendation] {
        try await unit.all(
            """
            SELECT \(unescaped: Recommendation.columns) FROM recommendations
            WHERE (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue))
              AND (\(after?.createdAt)::timestamptz IS NULL OR (updated_at, id) < (\(after?.createdAt), \(after?.id)))
            ORDER BY updated_at DESC, id DESC LIMIT \(limit)
            """)
    }

}

/// One recommendation (`recommendations.read`).
package typealias GetRecommendation = GetByID<Recommendation>

extension Recommendation: ReadByID {
    package static let table = "recommendations"
    package static let readAction: Action = "recommendations.read"
}

/// The dry run of an audience rule (`recommendations.audience`): how many active accounts it
/// selects now, and the ten newest of them, masked for roles that see PII masked. Locked and
/// deleted accounts do not use the app, so they are not counted. A rule with a health part is
/// counted inside the database (`health_audience_count`) and answered as a count only: no sample
/// (no one's health-derived membership is shown), and no count under `minimumCount` (nil then).
package struct AudienceReach: Query {
    package static let action: Action = "recommendations.audience"
    package static let sampleSize = 10
    /// The smallest count a health-derived audience is answered with.
    package static let minimumCount = 10
    let audience: Recommendation.Audience

    package init(_ audience: Recommendation.Audience) { self.audience = audience }

    package struct Reach: Sendable, Equatable {
        /// Nil when withheld: a health-derived audience under `minimumCount`.
        package let count: Int?
        package let sample: [Customer]
    }

    package func read(in unit: UnitOfWork) async throws -> Reach {
        let states = audience.stored
        guard !audience.usesHealth else {
            let health = audience.storedHealth
            let count =
                try await unit.first(
                    """
                    SELECT health_audience_count(\(states)::text[], \(unit.now), \(health.bands)::text[],
                        \(health.sexes)::text[], \(health.goals)::text[], \(health.levels)::text[])
                    """
                ) { try $0.decode(Int.self) } ?? 0
            return Reach(count: count < Self.minimumCount ? nil : count, sample: [])
        }
        let count = try await unit.first(
            """
            SELECT count(*) FROM customers c WHERE c.status = 'active'
              AND (cardinality(\(states)::text[]) = 0 OR c.subscription = ANY(\(states)))
            """
        ) { try $0.decode(Int.self) }
        let sample: [Customer] = try await unit.all(
            """
            SELECT \(unescaped: Customer.columns) FROM \(unescaped: Customer.from) WHERE c.status = 'active'
              AND (cardinality(\(states)::text[]) = 0 OR c.subscription = ANY(\(states)))
            ORDER BY c.created_at DESC, c.id DESC LIMIT \(Self.sampleSize)
            """)
        return Reach(count: count ?? 0, sample: unit.context.masksPII ? sample.map(\.masked) : sample)
    }
}

/// A recommendation as the app receives it for one customer.
package struct CustomerRecommendation: Sendable, Equatable {
    package let id: UUID
    package let kind: Recommendation.Kind
    package let title: String
    package let body: String
    package let html: String
    package let publishedAt: Date
    package let validUntil: Date?
    package let version: Int64
    /// The live content it features, in order (the catalogs' featured lists, catered as it is).
    package let featured: [FeaturedContent]
}

/// What applies to one customer now (`recommendations.for_customer`): published, inside its
/// window, its audience rule selecting the customer; newest publication first, at most `limit`.
/// One statement for the customer and every recommendation: the customer's row joined with the
/// matching recommendations, so an unknown customer is told apart from one with none (404). A
/// rule's health parts are matched inside the database (`health_audience_match`): the customer's
/// own data serving their own feed, a yes or no that no person reads, so no access event. Each
/// recommendation names the content it features that is live now.
package struct CustomerRecommendations: Query {
    package static let action: Action = "recommendations.for_customer"
    package static let limit = 50
    let customerID: UUID

    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> [CustomerRecommendation] {
        let rows = try await unit.all(
            """
            SELECT r.id, r.kind, r.title, r.body, r.html, r.published_at, r.valid_until, r.version,
                \(unescaped: FeaturedItem.liveColumn)
            FROM customers c LEFT JOIN LATERAL (
                SELECT * FROM recommendations r
                WHERE r.status = 'published' AND (r.valid_from IS NULL OR r.valid_from <= \(unit.now))
                  AND (r.valid_until IS NULL OR r.valid_until > \(unit.now))
                  AND (cardinality(r.subscriptions) = 0 OR c.subscription = ANY(r.subscriptions))
                  AND health_audience_match(c.id, \(unit.now), r.age_bands, r.sexes, r.weight_goals, r.activity_levels)
                ORDER BY r.published_at DESC, r.id DESC LIMIT \(Self.limit)
            ) r ON true
            WHERE c.id = \(customerID)
            """
        ) { row in
            try row.decode((UUID?, String?, String?, String?, String?, Date?, Date?, Int64?, String?).self)
        }
        guard !rows.isEmpty else { throw DomainError.notFound("Customer \(customerID.text)") }
        return try rows.compactMap { c in
            guard let id = c.0, let title = c.2, let body = c.3, let html = c.4, let at = c.5, let version = c.7,
                let featured = c.8
            else { return nil }
            guard let kind = c.1.flatMap(Recommendation.Kind.init(rawValue:)) else {
                throw DomainError.inconsistent("recommendation \(id) kind")
            }
            return CustomerRecommendation(
                id: id, kind: kind, title: title, body: body, html: html, publishedAt: at, validUntil: c.6,
                version: version, featured: try JSONDecoder().decode([FeaturedContent].self, from: Data(featured.utf8)))
        }
    }
}
