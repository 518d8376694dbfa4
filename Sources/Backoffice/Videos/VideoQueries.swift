import BackofficePlatform
import Foundation
import PostgresNIO

/// Videos in every state (`videos.list`), as `ListReviewed` lists reviewed content.
package typealias ListVideos = ListReviewed<WorkoutVideo>
/// One video, its newest version (`videos.read`); another writer's is 404 to an expert.
package typealias GetVideo = GetReviewed<WorkoutVideo>

/// A live video as the app shows it to one customer: the live version, the estimate of the
/// customer's calories, and whether it plays for them.
package struct CustomerVideo: Sendable, Equatable {
    package var id: UUID
    package var version: Int
    package var publishedAt: Date
    package var content: VideoContent
    /// Whether the customer may play it: a free video, or a premium one for a subscriber. A video
    /// that does not play is answered without its address.
    package var plays: Bool
    /// The calories the customer spends through it, to 10 kcal, from their latest weight (read
    /// inside the database: the weight never leaves it); nil without a health profile.
    package var kilocalories: Int?
}

/// The live videos as one customer's app shows them (`videos.for_customer`), newest publication
/// first, a page after `after`, `category` filtering: each with the customer's own calorie
/// estimate and whether it plays for them, in one statement. The database computes the estimate
/// (`video_kilocalories`: `MET × kg × hours` from the customer's latest weight, to 10 kcal) and
/// answers only that: no person reads a health value, so nothing is added to the access log
/// (which records people's reads); the function serves the app's backend alone. Premium videos
/// play for a customer whose subscription is live (`customers.subscription`, kept from the
/// subscription records); for the others they are listed without their address.
/// - Throws: 404 for a customer not found or deleted.
package struct CustomerVideos: Query {
    package static let action: Action = "videos.for_customer"
    let customerID: UUID
    let videoID: UUID?
    let category: String?
    let after: (time: Date, id: UUID)?
    let limit: Int

    package init(
        customerID: UUID, videoID: UUID? = nil, category: String? = nil, after: (time: Date, id: UUID)? = nil,
        limit: Int = 1
    ) {
        (self.customerID, self.videoID, self.category, self.after, self.limit) =
            (customerID, videoID, category, after, limit)
    }

    /// The videos, and what the answer depends on besides them (the customer's subscription and
    /// profile version), for its ETag.
    package func read(in unit: UnitOfWork) async throws -> (videos: [CustomerVideo], basis: String) {
        var basis: String?
        var videos: [CustomerVideo] = []
        for row in try await unit.all(
            """
            SELECT c.subscription = 'active', k.profile_version, w.id, w.live_version, w.first_published_at,
                k.kilocalories, \(unescaped: VideoContent.columns)
            FROM customers c
            LEFT JOIN LATERAL (
                SELECT w.id, w.live_version, w.first_published_at FROM videos w
                JOIN video_versions v ON v.video_id = w.id AND v.version = w.live_version
                WHERE w.live_version IS NOT NULL AND w.state <> 'archived'
                  AND (\(videoID)::uuid IS NULL OR w.id = \(videoID))
                  AND (\(category)::text IS NULL OR v.category = \(category))
                  AND (\(after?.time)::timestamptz IS NULL
                       OR (w.first_published_at, w.id) < (\(after?.time), \(after?.id)))
                ORDER BY w.first_published_at DESC, w.id DESC LIMIT \(limit)
            ) w ON true
            LEFT JOIN video_versions v ON v.video_id = w.id AND v.version = w.live_version
            LEFT JOIN LATERAL video_kilocalories(c.id, w.id) k ON w.id IS NOT NULL
            WHERE c.id = \(customerID) AND c.status <> 'deleted'
            ORDER BY w.first_published_at DESC, w.id DESC
            """, { $0 })
        {
            let c = try row.decode((Bool, Int?, UUID?, Int?, Date?, Int?).self)
            basis = "\(c.0):\(c.1 ?? 0)"
            guard let id = c.2, let version = c.3, let publishedAt = c.4 else { continue }
            let content = try VideoContent(row.makeRandomAccess(), from: 6)
            videos.append(
                CustomerVideo(
                    id: id, version: version, publishedAt: publishedAt, content: content,
                    plays: !content.premium || c.0, kilocalories: c.5))
        }
        guard let basis else { throw DomainError.notFound("Customer \(customerID.text)") }
        return (videos, basis)
    }
}
