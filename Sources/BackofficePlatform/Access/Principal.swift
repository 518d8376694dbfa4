import Foundation

/// The platform tenant: platform roles act for it, and a transaction acting for it sees every tenant.
package let platformTenantID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

/// Who makes a change: an authenticated principal, or the system itself (timed lock expiry,
/// automatic lockout, bootstrap).
package struct Principal: Sendable, Equatable {
    package let operatorID: UUID?
    package let role: String
    package let tenantID: UUID
    /// The API token the principal authenticated with (nil in the console and for the system).
    package let tokenID: UUID?
    /// The console session the principal is signed in with (nil through the API and for the system).
    package let sessionID: UUID?
    /// The operator's own time zone, which the console shows and reads times in (UTC through the
    /// API and for the system).
    package let timeZone: TimeZone
    /// The scopes the credential was narrowed to (`policies/access.yaml`, `scopes:`); nil when it
    /// holds every scope of its role (a console session, a token issued without `scopes`).
    package let scopes: Set<String>?
    /// The source networks the token is accepted from; nil when any.
    package let allowedAddresses: [CIDR]?

    package init(
        operatorID: UUID, role: Role, tenantID: UUID, tokenID: UUID?, sessionID: UUID? = nil,
        timeZone: TimeZone = .gmt, scopes: Set<String>? = nil, allowedAddresses: [CIDR]? = nil
    ) {
        self.operatorID = operatorID
        self.role = role.rawValue
        (self.tenantID, self.tokenID, self.sessionID, self.timeZone) = (tenantID, tokenID, sessionID, timeZone)
        (self.scopes, self.allowedAddresses) = (scopes, allowedAddresses)
    }

    /// Whether the credential is accepted from `address` (the request's source, text form).
    package func accepts(from address: String) -> Bool {
        allowedAddresses.map { networks in networks.contains { $0.contains(address) } } ?? true
    }

    /// An actor that is no operator (no id, token or session), acting for the platform.
    private init(nobody role: String) {
        self.operatorID = nil
        self.role = role
        self.tenantID = platformTenantID
        self.tokenID = nil
        self.sessionID = nil
        self.timeZone = .gmt
        (self.scopes, self.allowedAddresses) = (nil, nil)
    }

    /// The system actor: audited with no actor id and the role `system`.
    package static let system = Principal(nobody: "system")

    /// Whoever calls a public operation (no token): audited with no actor id and the role
    /// `anonymous`; `policies/access.yaml`'s `public:` says what it may do.
    package static let anonymous = Principal(nobody: "anonymous")

    /// The principal's role, nil for the system actor.
    package var knownRole: Role? { Role(rawValue: role) }
}
