import BackofficeConsole
import BackofficePlatform
import Foundation

extension PolicySet {
    /// The domains' own policies the service reads beside the platform's: each domain registers its
    /// policy type here, once.
    package static let domainPolicies: [any DomainPolicy.Type] = [
        ConsolePolicy.self, MessagesPolicy.self, PrivacyPolicy.self, ModerationPolicy.self, BillingPolicy.self,
        VideosPolicy.self, RecipesPolicy.self, ApprovalPolicy.self,
    ]

    /// Reads and validates every policy file (the platform's and the domains') from `directory`.
    /// - Throws: `PolicyError` naming the file and the entry at the first problem.
    package static func load(from directory: URL) throws -> PolicySet {
        try load(from: directory, domains: domainPolicies)
    }

    /// Every policy file's text in `directory`, keyed by path relative to it.
    package static func texts(in directory: URL) throws -> [String: String] {
        try texts(in: directory, domains: domainPolicies)
    }

    /// Validates every policy text, keyed by path relative to the policies directory (pure: no I/O).
    package static func parse(_ texts: [String: String], directory: String = "policies") throws -> PolicySet {
        try parse(texts, directory: directory, domains: domainPolicies)
    }
}
