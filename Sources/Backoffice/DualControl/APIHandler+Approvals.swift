import BackofficeAPI
import BackofficePlatform
import Foundation

extension ApprovalRequest {
    /// The request as the contract answers it, its status at `now`.
    func api(at now: Date) throws -> Components.Schemas.ApprovalRequest {
        Components.Schemas.ApprovalRequest(
            id: id.text, status: try .init(known: status(at: now).rawValue), action: action, summary: summary,
            targetType: targetType, targetId: targetID, amount: amount, reason: reason,
            requestedBy: requestedBy.text, requestedAt: createdAt, expiresAt: expiresAt,
            decidedBy: decidedBy?.text, decidedAt: decidedAt, decisionNote: decisionNote)
    }
}

/// What a change `policies/approvals.yaml` may hold came to: done at once, or held for approval
/// (the request as the caller answers it).
package enum HeldOrDone<Output: Sendable, Request: Sendable>: Sendable {
    case done(Output)
    case held(Request)
}

extension APIHandler {
    /// Runs a change the approvals policy may hold (`change(_:on:body:status:respond:)`), or, when
    /// the policy holds it, records its approval request instead (`RequestApproval`, under the
    /// same Idempotency-Key: a repeat answers the same request).
    func changeUnlessHeld<Operation: ApprovalGated, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID? = nil, body: (some Encodable & Sendable)?, status: Int = 200,
        respond: @escaping @Sendable (Operation.Output) throws -> Reply
    ) async throws -> HeldOrDone<Reply, Components.Schemas.ApprovalRequest> {
        guard operation.needsApproval(policies) != nil else {
            return .done(try await change(operation, on: id, body: body, status: status, respond: respond))
        }
        let now = self.now
        return .held(
            try await change(RequestApproval(change: operation), on: id, body: body, status: 202) {
                try $0.api(at: now)
            })
    }

    func listApprovals(_ input: Operations.ListApprovals.Input) async throws -> Operations.ListApprovals.Output {
        let now = self.now
        let (items, next) = try await newestFirst(
            limit: input.query.limit, cursor: input.query.cursor, { ListApprovals(after: $0, limit: $1) }
        ) { try $0.api(at: now) }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getApproval(_ input: Operations.GetApproval.Input) async throws -> Operations.GetApproval.Output {
        let request = try await read(GetApproval(approvalID: try parseID(input.path.approvalId, "approval_id")))
        return .ok(.init(body: .json(try request.api(at: now))))
    }

    func approveChange(_ input: Operations.ApproveChange.Input) async throws -> Operations.ApproveChange.Output {
        let id = try parseID(input.path.approvalId, "approval_id")
        let body = if case .json(let body)? = input.body { body } else { Components.Schemas.ApprovalDecision?.none }
        let now = self.now
        let approved = try await change(ApproveChange(approvalID: id, note: body?.note), on: id, body: body) {
            try $0.api(at: now)
        }
        return .ok(.init(body: .json(approved)))
    }

    func rejectChange(_ input: Operations.RejectChange.Input) async throws -> Operations.RejectChange.Output {
        let id = try parseID(input.path.approvalId, "approval_id")
        let body = if case .json(let body)? = input.body { body } else { Components.Schemas.ApprovalDecision?.none }
        let now = self.now
        let rejected = try await change(RejectChange(approvalID: id, note: body?.note), on: id, body: body) {
            try $0.api(at: now)
        }
        return .ok(.init(body: .json(rejected)))
    }
}
