import Foundation

/// A change that `policies/approvals.yaml` may hold for a second person's approval (dual
/// control). Held, it is stored as JSON with its approval request until decided, so it holds no
/// secret; approved, it is decoded and performed in the approval's transaction, with the approver
/// as its actor.
///
/// The runners refuse to run it directly when the policy holds it (409 `approval_required`): the
/// API's and the console's change paths ask `needsApproval(_:)` first and record a request instead.
package protocol ApprovalGated: AuditedOperation, Codable {
    /// The amount the policy's `over` is compared with, in the change's own unit (points, cents);
    /// nil when it has none.
    var approvalAmount: Int64? { get }
    /// What the change is about, shown with the request and as a pending banner on the object.
    var approvalTarget: (type: String, id: String) { get }
    /// One line saying what the change does, for the approvers' queue.
    var approvalSummary: String { get }
    /// Why, as the requester gave it.
    var approvalReason: String? { get }
    /// Whether this change is of the kind its action's rule holds at all (granting a platform role,
    /// say, where granting a partner's is not held); true unless the change says otherwise.
    var approvalApplies: Bool { get }
    /// The change as it is held, in the requester's `unit`: what the requester's principal implies
    /// made explicit (its tenant) and the new object's id chosen, so that it runs the same whoever
    /// approves it and the request names what it will make, or what it was based on read, so that
    /// it is refused if that changed meanwhile. Itself unless the change says otherwise.
    func resolved(in unit: UnitOfWork) async throws -> Self
    /// Whether the policy's threshold reads more than the change itself (`quoted(in:)`); false
    /// unless the change says otherwise.
    static var isQuoted: Bool { get }
    /// The change with what its threshold reads besides itself filled in (how far the same object
    /// moved lately, so that splitting a change escapes nothing), read before deciding whether it
    /// is held (`ApprovalQuote`). The change's own step reads it again under its lock and refuses
    /// what moved past the threshold since. Itself unless the change says otherwise.
    func quoted(in unit: UnitOfWork) async throws -> Self
}

extension ApprovalGated {
    package var approvalApplies: Bool { true }
    package func resolved(in unit: UnitOfWork) -> Self { self }
    package static var isQuoted: Bool { false }
    package func quoted(in unit: UnitOfWork) -> Self { self }

    /// The policy's rule when it holds this change for approval; nil when it may run at once.
    package func needsApproval(_ policies: PolicySet) -> ApprovalPolicy.Rule? { policies.approvals.rule(for: self) }
}

/// Reads a change's quote (`ApprovalGated.quoted(in:)`) under the change's own permission: what
/// the API's and the console's change paths decide holding on.
package struct ApprovalQuote<Gated: ApprovalGated>: Query {
    package static var action: Action { Gated.action }
    package let change: Gated
    package init(_ change: Gated) { self.change = change }

    package func read(in unit: UnitOfWork) async throws -> Gated { try await change.quoted(in: unit) }
}
