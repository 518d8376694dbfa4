import Foundation
import PostgresNIO

/// How an appeal is stored (`appeals`).
extension Appeal: RowDecodable {
    package static let columns =
        "id, customer_id, lock_id, message, status, created_at, resolved_at, resolved_by, resolution_reason"

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, UUID, String, String, Date, Date?, UUID?, String?).self)
        self.init(
            id: c.0, customerID: c.1, lockID: c.2, message: c.3, status: try AppealStatus(known: c.4), createdAt: c.5,
            resolvedAt: c.6, resolvedBy: c.7, resolutionReason: c.8)
    }
}
