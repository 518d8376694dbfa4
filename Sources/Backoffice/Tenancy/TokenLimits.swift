import BackofficePlatform
import Foundation

/// What a new token may be narrowed to: some of its role's scopes, and source networks.
struct TokenLimits {
    /// At most this many source networks per token.
    static let maxNetworks = 20
    let scopes: [String]?
    let allowedAddresses: [String]?

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
}
