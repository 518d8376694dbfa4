import BackofficePlatform
import Foundation
import PostgresNIO

/// How a system message is stored (`system_messages`, platform sessions only).
extension SystemMessage: RowDecodable {
    package static let columns = """
        id, title, body, severity, audience, publish_at, expires_at, window_starts_at, window_ends_at, status,
            retracted_at,
        retract_reason, created_at, updated_at, version
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (
                UUID, String, String, String, String, Date?, Date?, Date?, Date?, String, Date?, String?, Date, Date,
                Int64
            ).self)
        self.init(
            id: c.0, title: c.1, body: c.2, severity: try Severity(known: c.3), audience: try Audience(known: c.4),
            publishAt: c.5,
            expiresAt: c.6, windowStartsAt: c.7, windowEndsAt: c.8, status: try Status(known: c.9), retractedAt: c.10,
            retractReason: c.11,
            createdAt: c.12, updatedAt: c.13, version: c.14)
    }
}
