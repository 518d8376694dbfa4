import Crypto
import Foundation
import Yams

/// A policy file that does not validate. The message names the file and the entry.
package struct PolicyError: Error, CustomStringConvertible, Sendable {
    package let file: String
    package let entry: String
    package let problem: String
    package var description: String { "\(file): \(entry): \(problem)" }
    package init(file: String, entry: String, problem: String) {
        (self.file, self.entry, self.problem) = (file, entry, problem)
    }
}

/// Who may do what (`policies/access.yaml`). Deny by default.
package struct AccessPolicy: Sendable {
    package struct Grant: Sendable {
        package let actions: Set<Action>
        package let piiMasked: Bool
        /// Of the content it may read or change, the role sees only what it wrote (`authored_only: true`).
        package var authoredOnly = false
    }
    package let grants: [Role: Grant]
    /// What anyone may do without a token (`public:`): the contract's `x-public` operations,
    /// performed by `Principal.anonymous`.
    package let publicActions: Set<Action>
    /// The scope each action belongs to (`scopes:`): every declared action but the public ones and
    /// the system's own events belongs to exactly one (`Scopes.swift`).
    package let scopeOfAction: [Action: String]

    /// Whether `role` may perform `action`; the anonymous principal only the public actions; an
    /// unknown role (e.g. the system actor) may do nothing here.
    package func allows(_ role: String, _ action: Action) -> Bool {
        if role == Principal.anonymous.role { return publicActions.contains(action) }
        guard let role = Role(rawValue: role), let grant = grants[role] else { return false }
        return grant.actions.contains(action)
    }

    /// Whether the role sees only the content it wrote (an expert's articles).
    package func authoredOnly(_ role: String) -> Bool {
        guard let role = Role(rawValue: role) else { return false }
        return grants[role]?.authoredOnly ?? false
    }

    /// Whether customer PII is masked for this role.
    package func masksPII(_ role: String) -> Bool {
        guard let role = Role(rawValue: role) else { return false }
        return grants[role]?.piiMasked ?? false
    }
}

/// Lockout and token lifetimes (`policies/security.yaml`).
package struct SecurityPolicy: Sendable {
    package let consecutiveFailedLogins: Int
    package let defaultTokenLifetimeHours: Int
    package let maxTokenLifetimeHours: Int
    /// Failed authentications allowed per source address within `failedAuthenticationWindowSeconds`.
    package let failedAuthenticationLimit: Int
    package let failedAuthenticationWindowSeconds: Int
    /// Public submissions allowed per source address within `publicSubmissionWindowSeconds`.
    package let publicSubmissionLimit: Int
    package let publicSubmissionWindowSeconds: Int
}

/// Retention periods (`policies/retention.yaml`).
package struct RetentionPolicy: Sendable {
    package let deletedAccountsPurgeAfterDays: Int
    package let idempotencyKeepHours: Int
    package let loginAttemptsKeepDays: Int
    /// Audit events older than this many days leave the database once they are in the signed
    /// daily archives (`audit archive`).
    package let auditEventsKeepDays: Int
}

/// A domain's own policy, in files of its own under the policies directory: read, validated and
/// digested with the platform's policies at start-up, so the platform parses it without naming it.
/// A domain's policy is read as `policies[ModerationPolicy.self]`; the composition root lists
/// the domains' policies (`PolicySet.domainPolicies`).
package protocol DomainPolicy: Sendable {
    /// Its files in `directory`, by path relative to it (a folder of term files found by listing it).
    static func files(in directory: URL) -> [String]
    /// Validates its texts among `texts` (keyed by path relative to the policies directory).
    /// - Throws: `PolicyError` naming the file and entry at the first problem.
    static func parse(_ texts: [String: String], directory: String) throws -> Self
}

/// The policies the service runs with, validated, and the digest recorded in every audit event.
package struct PolicySet: Sendable {
    package let access: AccessPolicy
    package let security: SecurityPolicy
    package let retention: RetentionPolicy
    /// The domains' own policies, by type.
    private let domains: [ObjectIdentifier: any DomainPolicy]
    /// SHA-256 (hex) over the policy files' names and bytes: it changes when any policy changes.
    package let digest: String

    /// The platform's policy files; the domains' come besides (`DomainPolicy.files(in:)`).
    package static let fileNames = ["access.yaml", "retention.yaml", "security.yaml"]

    /// A domain's policy.
    package subscript<Policy: DomainPolicy>(_ type: Policy.Type) -> Policy {
        guard let policy = domains[ObjectIdentifier(type)] as? Policy else {
            preconditionFailure("\(type) is not among the domain policies this set was parsed with")
        }
        return policy
    }

    /// Reads and validates the platform's and `domains`' policy files from `directory`.
    /// - Throws: `PolicyError` naming the file and the entry at the first problem.
    package static func load(from directory: URL, domains: [any DomainPolicy.Type]) throws -> PolicySet {
        try parse(try texts(in: directory, domains: domains), directory: directory.path, domains: domains)
    }

    /// The platform's and `domains`' policy files' texts in `directory`, keyed by path relative to it.
    /// - Throws: `PolicyError` for a file that cannot be read.
    package static func texts(in directory: URL, domains: [any DomainPolicy.Type]) throws -> [String: String] {
        var texts: [String: String] = [:]
        for name in fileNames + domains.flatMap({ $0.files(in: directory) }) {
            let url = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: url.path),
                let text = String(data: data, encoding: .utf8)
            else {
                throw PolicyError(file: url.path, entry: "(file)", problem: "cannot be read")
            }
            texts[name] = text
        }
        return texts
    }

    /// SHA-256 (hex) over `texts`' names and bytes, in name order: it changes when any of them changes.
    package static func digest(of texts: [String: String]) -> String {
        var hasher = SHA256()
        for (name, text) in texts.sorted(by: { $0.key < $1.key }) {
            hasher.update(data: Data(name.utf8))
            hasher.update(data: Data([0]))
            hasher.update(data: Data(text.utf8))
            hasher.update(data: Data([0]))
        }
        return hex(hasher.finalize())
    }

    /// Validates policy texts keyed by file name, the platform's and `domains`' (pure: no I/O).
    package static func parse(
        _ texts: [String: String], directory: String = "policies", domains: [any DomainPolicy.Type]
    ) throws -> PolicySet {
        let accessFile = try PolicyDocument(texts, "access.yaml", directory: directory)
        let access = try parseAccess(accessFile.values, file: accessFile.file)
        let security = try PolicyDocument(texts, "security.yaml", directory: directory)
        let retention = try PolicyDocument(texts, "retention.yaml", directory: directory)
        let securityPolicy = SecurityPolicy(
            consecutiveFailedLogins: try security.integer("lockout", "consecutive_failed_logins", 1...100),
            defaultTokenLifetimeHours: try security.integer("tokens", "default_lifetime_hours", 1...87_600),
            maxTokenLifetimeHours: try security.integer("tokens", "max_lifetime_hours", 1...87_600),
            failedAuthenticationLimit: try security.integer("authentication", "max_failures_per_address", 1...100_000),
            failedAuthenticationWindowSeconds: try security.integer("authentication", "window_seconds", 1...86_400),
            publicSubmissionLimit: try security.integer("public_submissions", "max_per_address", 1...100_000),
            publicSubmissionWindowSeconds: try security.integer("public_submissions", "window_seconds", 1...86_400))
        guard securityPolicy.defaultTokenLifetimeHours <= securityPolicy.maxTokenLifetimeHours else {
            throw PolicyError(
                file: security.file, entry: "tokens.default_lifetime_hours",
                problem: "must not exceed tokens.max_lifetime_hours")
        }
        let retentionPolicy = RetentionPolicy(
            deletedAccountsPurgeAfterDays: try retention.integer("deleted_accounts", "purge_after_days", 1...3650),
            idempotencyKeepHours: try retention.integer("idempotency_keys", "keep_hours", 1...720),
            loginAttemptsKeepDays: try retention.integer("login_attempts", "keep_days", 1...3650),
            auditEventsKeepDays: try retention.integer("audit_events", "keep_days", 1...36_500)
        )
        let digest = digest(of: texts)
        return PolicySet(
            access: access, security: securityPolicy, retention: retentionPolicy,
            domains: Dictionary(
                uniqueKeysWithValues: try domains.map {
                    (ObjectIdentifier($0), try $0.parse(texts, directory: directory))
                }),
            digest: digest)
    }

    private static func parseAccess(_ doc: [String: Any], file: String) throws -> AccessPolicy {
        for key in doc.keys where !["roles", "public", "scopes"].contains(key) {
            throw PolicyError(file: file, entry: key, problem: "unknown key (expected 'roles', 'scopes' or 'public')")
        }
        guard let roles = doc["roles"] as? [String: Any] else {
            throw PolicyError(file: file, entry: "roles", problem: "missing mapping of roles")
        }
        var grants: [Role: AccessPolicy.Grant] = [:]
        for (name, body) in roles.sorted(by: { $0.key < $1.key }) {
            guard let role = Role(rawValue: name) else {
                throw PolicyError(
                    file: file, entry: "roles.\(name)",
                    problem: "unknown role (known: \(Role.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard let map = body as? [String: Any] else {
                throw PolicyError(file: file, entry: "roles.\(name)", problem: "must be a mapping with scope and allow")
            }
            for key in map.keys where !["scope", "allow", "pii", "authored_only"].contains(key) {
                throw PolicyError(file: file, entry: "roles.\(name).\(key)", problem: "unknown key")
            }
            let expectedScope = role.isPlatform ? "platform" : "tenant"
            guard let scope = map["scope"] as? String, scope == expectedScope else {
                throw PolicyError(file: file, entry: "roles.\(name).scope", problem: "must be '\(expectedScope)'")
            }
            var piiMasked = false
            if let pii = map["pii"] {
                guard let value = pii as? String, ["masked", "visible"].contains(value) else {
                    throw PolicyError(file: file, entry: "roles.\(name).pii", problem: "must be 'masked' or 'visible'")
                }
                piiMasked = value == "masked"
            }
            guard let allow = map["allow"] as? [Any] else {
                throw PolicyError(file: file, entry: "roles.\(name).allow", problem: "must be a list of actions")
            }
            guard map["authored_only"] == nil || map["authored_only"] is Bool else {
                throw PolicyError(file: file, entry: "roles.\(name).authored_only", problem: "must be true or false")
            }
            grants[role] = .init(
                actions: try parseActions(allow, entry: "roles.\(name).allow", file: file), piiMasked: piiMasked,
                authoredOnly: map["authored_only"] as? Bool ?? false)
        }
        var publicActions = Set<Action>()
        if let section = doc["public"] {
            guard let map = section as? [String: Any], let allow = map["allow"] as? [Any], map.count == 1 else {
                throw PolicyError(
                    file: file, entry: "public", problem: "must be a mapping with only 'allow', a list of actions")
            }
            publicActions = try parseActions(allow, entry: "public.allow", file: file, wildcard: false)
        }
        return AccessPolicy(
            grants: grants, publicActions: publicActions,
            scopeOfAction: try parseScopes(doc["scopes"], publicActions: publicActions, file: file))
    }

    /// A list of declared action names (`*`: every action, where `wildcard` allows it).
    static func parseActions(_ allow: [Any], entry: String, file: String, wildcard: Bool = true) throws -> Set<
        Action
    > {
        var actions = Set<Action>()
        for (index, item) in allow.enumerated() {
            guard let text = item as? String else {
                throw PolicyError(file: file, entry: "\(entry)[\(index)]", problem: "must be an action name")
            }
            if text == "*" && wildcard {
                actions.formUnion(Action.allCases)
            } else if let action = Action(rawValue: text) {
                actions.insert(action)
            } else {
                throw PolicyError(file: file, entry: "\(entry)[\(index)]", problem: "unknown action '\(text)'")
            }
        }
        return actions
    }
}
