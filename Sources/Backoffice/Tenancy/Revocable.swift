import BackofficePlatform
import Foundation

/// A credential that is revoked once and for good (an API token, an OAuth client): its row's
/// `revoked_at` is set, and revoking it again is refused.
protocol Revocable: ListedByID {
    var tenantID: UUID { get }
    var revokedAt: Date? { get }
    /// The audit event's view of the row (never a secret).
    var snapshot: String { get throws }
    /// The audit event's `target_type`, which also names the credential in a refusal.
    static var targetType: String { get }
}

extension Revocable {
    /// Locks the row `id` and revokes it, audited as `action` (before and after).
    /// - Throws: `notFound` when no visible row has the id; `invalidTransition` (409) when it is
    ///   revoked already.
    static func revoke(_ id: UUID, as action: Action, in unit: UnitOfWork) async throws -> Audited<Self> {
        let noun = targetType.replacingOccurrences(of: "_", with: " ")
        let before = try await unit.one(
            "SELECT \(unescaped: columns) FROM \(unescaped: table) WHERE id = \(id) FOR UPDATE", as: Self.self,
            else: DomainError.notFound("The \(noun) \(id.text)"))
        guard before.revokedAt == nil else {
            throw DomainError.invalidTransition("The \(noun) is already revoked.", current: "revoked")
        }
        let after = try await unit.one(
            "UPDATE \(unescaped: table) SET revoked_at = \(unit.now) WHERE id = \(id) RETURNING \(unescaped: columns)",
            as: Self.self, else: DomainError.inconsistent("the revoked \(noun) was not returned"))
        return Audited(
            after,
            event: AuditRecord(
                action: action, tenantID: before.tenantID, targetType: targetType, targetID: id.text, reason: nil,
                before: try before.snapshot, after: try after.snapshot))
    }
}

extension Token: Revocable { static let targetType = "token" }
extension OAuthClient: Revocable { static let targetType = "oauth_client" }
