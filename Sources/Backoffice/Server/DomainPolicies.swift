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
        try load(from: directory, domains: domainPolicies).checkingApprovals(in: directory.path)
    }

    /// Every policy file's text in `directory`, keyed by path relative to it.
    package static func texts(in directory: URL) throws -> [String: String] {
        try texts(in: directory, domains: domainPolicies)
    }

    /// Validates every policy text, keyed by path relative to the policies directory (pure: no I/O).
    package static func parse(_ texts: [String: String], directory: String = "policies") throws -> PolicySet {
        try parse(texts, directory: directory, domains: domainPolicies).checkingApprovals(in: directory)
    }

    /// The set, once every change `approvals.yaml` holds can be held (`DualControlledChanges`) and
    /// each rule's approver roles may approve and make the change.
    /// - Throws: `PolicyError` naming the rule otherwise: a rule the service would silently ignore.
    private func checkingApprovals(in directory: String) throws -> PolicySet {
        let held = Set(DualControlledChanges.all.map { $0.action })
        for (action, rule) in approvals.rules.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let file = directory + "/" + ApprovalPolicy.file
            guard held.contains(action) else {
                throw PolicyError(file: file, entry: action.rawValue, problem: "no change of this action can be held")
            }
            for role in rule.approvers.sorted()
            where !access.allows(role, DecideApproval.approve) || !access.allows(role, action) {
                throw PolicyError(
                    file: file, entry: "\(action.rawValue).approvers",
                    problem:
                        "\(role) may not approve it (access.yaml grants it not both approvals.approve and \(action))")
            }
        }
        return self
    }
}
