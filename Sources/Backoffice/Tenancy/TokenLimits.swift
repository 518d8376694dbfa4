import BackofficePlatform
import Foundation

/// What a new token may be narrowed to: some of its role's scopes, and source networks.
struct TokenLimits {
    /// At most this many source networks per token.
    static let maxNetworks = 20
    let scopes: [String]?
    let allowedAddresses: [String]?

    /// The networks as stored (`cidr[]`, canonical), after `check` has refused any that is not one.
    var networks: [String]? { allowedAddresses.map { $0.compactMap { try? CIDR($0).canonical } } }

    /// - Throws: `invalid` naming `scopes` (empty, unknown, or a scope none of the role's actions
    ///   belongs to) or `allowed_addresses` (empty, too many, or not an address or CIDR network).
    func check(for role: Role, in access: AccessPolicy) throws {
        var validation = Validation()
        if let scopes {
            let offered = Set(access.scopes(of: role))
            validation.require(!scopes.isEmpty, "scopes", "required", "name at least one scope, or leave scopes out")
            for scope in scopes where !offered.contains(scope) {
                validation.require(
                    false, "scopes", "not_offered",
                    access.scopes.contains(scope)
                        ? "'\(scope.prefix(64))' is not a scope of the role \(role.rawValue)"
                        : "'\(scope.prefix(64))' is not a scope (backoffice policies scopes)")
            }
        }
        if let allowedAddresses {
            validation.require(
                (1...Self.maxNetworks).contains(allowedAddresses.count), "allowed_addresses", "out_of_range",
                "name 1 to \(Self.maxNetworks) networks, or leave allowed_addresses out")
            for text in allowedAddresses where (try? CIDR(text)) == nil {
                validation.require(
                    false, "allowed_addresses", "invalid_network",
                    "'\(text.prefix(64))' is not an IP address or CIDR network")
            }
        }
        try validation.check()
    }

    /// The limits a credential issued by `issuer` gets: never more than the issuer's own. An
    /// issuer narrowed to some scopes grants only those (asked for none: its own, within the
    /// role's); one bound to networks grants only networks inside its own (asked for none: its own).
    /// - Throws: `invalid` naming `scopes` or `allowed_addresses` that reach beyond the issuer's.
    func bounded(by issuer: Principal, role: Role, in access: AccessPolicy) throws -> TokenLimits {
        var validation = Validation()
        var scopes = self.scopes
        if let held = issuer.scopes {
            if let asked = scopes {
                for scope in asked where !held.contains(scope) {
                    validation.require(
                        false, "scopes", "beyond_credential",
                        "'\(scope.prefix(64))' is not a scope of the credential you issue it with")
                }
            } else {
                scopes = access.scopes(of: role).filter(held.contains)
                validation.require(
                    scopes?.isEmpty == false, "scopes", "beyond_credential",
                    "your credential holds none of the role's scopes")
            }
        }
        var networks = allowedAddresses
        if let bound = issuer.allowedAddresses {
            if let asked = networks {
                for text in asked {
                    guard let network = try? CIDR(text) else { continue }  // refused by `check`
                    validation.require(
                        bound.contains { $0.contains(network) }, "allowed_addresses", "beyond_credential",
                        "'\(text.prefix(64))' reaches beyond the networks of the credential you issue it with")
                }
            } else {
                networks = bound.map(\.description)
            }
        }
        try validation.check()
        return TokenLimits(scopes: scopes, allowedAddresses: networks)
    }
}
