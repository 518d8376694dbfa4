import BackofficePlatform
import Foundation
import PostgresNIO

/// How an appeal is stored (`appeals`).
extension Appeal: RowDecodable {
    package static let columns =
        "id, customer_id, lock_id, case_id, message, status, created_at, resolved_at, resolved_by, resolution_reason"

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "appeal")
        self.init(
            id: try cells.next(), customerID: try cells.next(), lockID: try cells.next(), caseID: try cells.next(),
            message: try cells.next(), status: try AppealStatus(known: cells.next(String.self)),
            createdAt: try cells.next(), resolvedAt: try cells.next(), resolvedBy: try cells.next(),
            resolutionReason: try cells.next())
    }
}
