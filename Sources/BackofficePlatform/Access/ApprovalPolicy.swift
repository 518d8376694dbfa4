import Foundation

/// Dual control (`policies/approvals.yaml`): which changes take effect only once a second person
/// approves them, past which amount, and who may approve.
package struct ApprovalPolicy: DomainPolicy {
    /// One action's rule.
    package struct Rule: Sendable {
        /// The amount past which a change needs approval (its magnitude); nil: every change does.
        package let over: Int64?
        /// The roles whose members may approve (never the requester).
        package let approvers: Set<String>
    }

    /// How long a request waits for its decision; past it, it does nothing.
    package let expiresAfterHours: Int
    package let rules: [Action: Rule]

    package static let file = "approvals.yaml"

    package static func files(in directory: URL) -> [String] { [file] }

    package static func parse(_ texts: [String: String], directory: String) throws -> ApprovalPolicy {
        let document = try PolicyDocument(texts, file, directory: directory)
        var rules: [Action: Rule] = [:]
        for name in document.values.keys.sorted() where name != "requests" {
            guard let action = Action(rawValue: name) else {
                throw PolicyError(file: document.file, entry: name, problem: "not an action of the contract")
            }
            let entry = document.values[name] as? [String: Any] ?? [:]
            for key in entry.keys where !["over", "approvers"].contains(key) {
                throw PolicyError(file: document.file, entry: "\(name).\(key)", problem: "unknown key")
            }
            let over = try entry["over"].map { _ in Int64(try document.integer(name, "over", 1...1_000_000_000)) }
            let approvers = try document.roles(name, "approvers")
            guard !approvers.isEmpty else {
                throw PolicyError(file: document.file, entry: "\(name).approvers", problem: "must name a role")
            }
            rules[action] = Rule(over: over, approvers: approvers)
        }
        return ApprovalPolicy(
            expiresAfterHours: try document.integer("requests", "expires_after_hours", 1...720), rules: rules)
    }

    /// The rule a change falls under, when it needs approval: its action is listed, the change is of
    /// the kind the rule holds (`ApprovalGated.approvalApplies`) and its amount
    /// (`ApprovalGated.approvalAmount`) is past the rule's `over`.
    package func rule(for change: some ApprovalGated) -> Rule? {
        guard let rule = rules[change.permission], change.approvalApplies else { return nil }
        guard let over = rule.over else { return rule }
        return (change.approvalAmount ?? 0).magnitude > over.magnitude ? rule : nil
    }
}

extension PolicySet {
    /// Dual control's rules.
    package var approvals: ApprovalPolicy { self[ApprovalPolicy.self] }
}
