import BackofficePlatform
import Foundation
import PostgresNIO

/// Messages, newest first, after the keyset (`created_at`, `id`) of `after` (`messages.list`).
package typealias ListMessages = ListNewestFirst<SystemMessage>

extension SystemMessage: ListedNewestFirst, ReadByID {
    package static let table = "system_messages"
    package static let listAction: Action = "messages.list"
    package static let readAction: Action = "messages.read"
}

/// One message (`messages.read`).
package typealias GetMessage = GetByID<SystemMessage>

/// The messages showing now for an audience, most severe first, then newest (`messages.active`,
/// the app's read): published, `publish_at` reached, `expires_at` not. `all` shows only messages
/// for everyone; `subscribers` and `non_subscribers` add theirs.
package struct ActiveMessages: Query {
    package static let action: Action = "messages.active"
    package let audience: SystemMessage.Audience
    package init(audience: SystemMessage.Audience) { self.audience = audience }

    package func read(in unit: UnitOfWork) async throws -> [SystemMessage] {
        let audiences = audience == .all ? ["all"] : ["all", audience.rawValue]
        return try await unit.all(
            """
            SELECT \(unescaped: SystemMessage.columns) FROM system_messages
            WHERE status = 'published' AND publish_at <= \(unit.now) AND (expires_at IS NULL OR expires_at >
                \(unit.now))
              AND audience = ANY(\(audiences)::text[])
            ORDER BY array_position(ARRAY['critical', 'maintenance', 'warning', 'info'], severity), publish_at DESC,
                id LIMIT 100
            """)
    }
}
