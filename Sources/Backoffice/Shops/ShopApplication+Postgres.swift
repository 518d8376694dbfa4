import Foundation
import PostgresNIO
import BackofficePlatform

/// How an application is stored (`shop_applications`, platform sessions only).
extension ShopApplication: RowDecodable {
    package static let columns = """
        id, legal_name, contact_email, tax_id, address::text, payout_account_holder, payout_account_last4,
            payout_account_ref,
        checks::text, eligible, status, submitted_at, decided_at, decision_reason, tenant_id, version
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (
                UUID, String, String, String, String, String, String, String?, String, Bool, String, Date, Date?,
                String?, UUID?, Int64
            ).self)
        let decoder = JSONDecoder()
        self.init(
            id: c.0, legalName: c.1, contactEmail: c.2, taxID: c.3,
            address: try decoder.decode(ShopAddress.self, from: Data(c.4.utf8)),
            payoutAccountHolder: c.5, payoutAccountLast4: c.6, payoutAccountReference: c.7,
            checks: try decoder.decode([EligibilityCheck].self, from: Data(c.8.utf8)), eligible: c.9,
            status: try Status(known: c.10),
            submittedAt: c.11, decidedAt: c.12, decisionReason: c.13, tenantID: c.14, version: c.15)
    }

    /// The application; with `forUpdate`, locked until the unit of work ends.
    /// - Throws: `DomainError.notFound`.
    static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> ShopApplication {
        try await unit.byID("shop_applications", id, forUpdate: forUpdate, notFound: "Shop application \(id.text)")
    }
}
