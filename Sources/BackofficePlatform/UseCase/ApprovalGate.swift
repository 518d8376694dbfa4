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
}

extension ApprovalGated {
    package var approvalApplies: Bool { true }
    package func resolved(in unit: UnitOfWork) -> Self { self }

    /// The policy's rule when it holds this change for approval; nil when it may run at once.
    package func needsApproval(_ policies: PolicySet) -> ApprovalPolicy.Rule? { policies.approvals.rule(for: self) }
}
