import Foundation
import NIOCore
import PostgresNIO
import BackofficePlatform

/// A shop application's claim code: given to the applicant once, in the answer to its
/// application, and kept only as its SHA-256.
enum ShopClaimCode {
    /// How long after applying the code can be redeemed.
    static let lifetime: TimeInterval = 14 * 24 * 3600

    /// A new code: `sc_` and 32 random bytes, base64url.
    static func generate() -> String { "sc_" + TokenSecret.generate().value.dropFirst(3) }

    static func hash(_ code: String) -> [UInt8] { TokenSecret(value: code).hash }
}

/// The applicant claims its approved shop (`shop_applications.claim`, public, rate-limited): the
/// claim code its application was answered with, once, within 14 days of applying, is exchanged
/// for a token of the shop's first partner admin (its secret in this answer only). A wrong, used
/// or expired code is 403 `claim_refused`, which one not said; a right code before approval is
/// 409 `not_approved`. Nobody else — not the manager who approved — ever holds that credential.
package struct ClaimShop: AuditedOperation {
    package static let action: Action = "shop_applications.claim"
    let applicationID: UUID
    let code: String

    package init(applicationID: UUID, code: String) { (self.applicationID, self.code) = (applicationID, code) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(Token, TokenSecret)> {
        let refused = DomainError.forbiddenTarget(
            Self.action, code: "claim_refused",
            detail: "The claim code is not valid for this application (wrong, used or expired).")
        guard
            let (hash, expires, claimed, status, tenant, email) = try await unit.first(
                """
                SELECT claim_hash, claim_expires_at, claimed_at, status, tenant_id, contact_email FROM shop_applications
                WHERE id = \(applicationID) FOR UPDATE
                """, { try $0.decode((ByteBuffer?, Date?, Date?, String, UUID?, String).self) })
        else { throw refused }
        guard let hash, Array(hash.readableBytesView) == ShopClaimCode.hash(code), let expires, expires > unit.now,
            claimed == nil
        else {
            throw refused
        }
        guard status == ShopApplication.Status.approved.rawValue, let tenant else {
            throw DomainError.conflict(
                code: "not_approved", detail: "The application is \(status): claim the shop once it is approved.")
        }
        guard
            let admin = try await unit.first(
                """
                SELECT id FROM operators WHERE tenant_id = \(tenant) AND role = 'partner_admin' AND email = \(email)
                    AND status = 'active'
                """, { try $0.decode(UUID.self) })
        else { throw refused }
        try await unit.execute("UPDATE shop_applications SET claimed_at = \(unit.now) WHERE id = \(applicationID)")
        let token = try await CreateToken(operatorID: admin, name: "claimed by the applicant", expiresInHours: nil)
            .perform(in: unit)
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "shop_application",
            targetID: applicationID.text, reason: nil, before: nil,
            after: try AuditRecord.json(["tenant_id": tenant.text, "token_id": token.output.0.id.text]))
        return Audited(token.output, event: event, more: token.events)
    }
}
