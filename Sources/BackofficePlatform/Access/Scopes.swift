import Foundation

/// Scopes (`policies/access.yaml`, `scopes:`): what a credential may be narrowed to. A call needs
/// its role's grant and its action's scope.
extension AccessPolicy {
    /// Every scope the policy declares, sorted.
    package var scopes: [String] { Set(scopeOfAction.values).sorted() }

    /// The scope `action` needs; nil for the public actions and the system's events.
    package func scope(of action: Action) -> String? { scopeOfAction[action] }

    /// The scopes whose actions `role` is granted, sorted: the full set a token of the role holds
    /// unless it was issued with fewer.
    package func scopes(of role: Role) -> [String] {
        Set((grants[role]?.actions ?? []).compactMap { scopeOfAction[$0] }).sorted()
    }

    /// Whether the credential of `principal` holds the scope `action` needs.
    package func holdsScope(_ principal: Principal, _ action: Action) -> Bool {
        guard let held = principal.scopes, let needed = scopeOfAction[action] else { return true }
        return held.contains(needed)
    }
}

extension PolicySet {
    /// The `scopes:` mapping (scope name → its actions), inverted: each declared action but the
    /// public ones and the system's events in exactly one scope, named `area:verb`.
    static func parseScopes(_ section: Any?, publicActions: Set<Action>, file: String) throws -> [Action:
        String]
    {
        guard let map = section as? [String: Any] else {
            throw PolicyError(file: file, entry: "scopes", problem: "missing mapping of scopes to their actions")
        }
        var scopeOf: [Action: String] = [:]
        for (scope, body) in map.sorted(by: { $0.key < $1.key }) {
            guard scope.wholeMatch(of: /[a-z_]{1,40}:[a-z_]{1,20}/) != nil else {
                throw PolicyError(file: file, entry: "scopes.\(scope)", problem: "must be named area:verb (a-z, _)")
            }
            guard let list = body as? [Any], !list.isEmpty else {
                throw PolicyError(file: file, entry: "scopes.\(scope)", problem: "must be a list of actions")
            }
            for action in try parseActions(list, entry: "scopes.\(scope)", file: file, wildcard: false) {
                if let other = scopeOf[action] {
                    throw PolicyError(
                        file: file, entry: "scopes.\(scope)", problem: "'\(action)' is already in '\(other)'")
                }
                guard !publicActions.contains(action), !Action.sessionEvents.contains(action) else {
                    throw PolicyError(
                        file: file, entry: "scopes.\(scope)", problem: "'\(action)' needs no token and has no scope")
                }
                scopeOf[action] = scope
            }
        }
        let unscoped = Action.allCases.filter {
            scopeOf[$0] == nil && !publicActions.contains($0) && !Action.sessionEvents.contains($0)
        }
        guard unscoped.isEmpty else {
            throw PolicyError(
                file: file, entry: "scopes",
                problem: "every action needs a scope; none for \(unscoped.map(\.rawValue).joined(separator: ", "))")
        }
        return scopeOf
    }
}
