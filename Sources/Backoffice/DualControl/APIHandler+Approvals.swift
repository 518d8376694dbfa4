import BackofficeAPI
import BackofficePlatform
import Foundation

extension ApprovalRequest {
    /// The request as the contract answers it, its status at `now`.
    func api(at now: Date) throws -> Components.Schemas.ApprovalRequest {
        Components.Schemas.ApprovalRequest(
            id: id.text, status: try .init(known: status(at: now).rawValue), action: action, summary: summary,
            change: try JSONDecoder().decode(
                Components.Schemas.ApprovalRequest.ChangePayload.self, from: presentedChange() ?? Data("{}".utf8)),
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
    /// the policy holds it, records its approval request instead (`RequestApproval`). A repeat under
    /// the same Idempotency-Key takes the path the key took, whatever the policy or the quote says now.
    func changeUnlessHeld<Operation: ApprovalGated, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID? = nil, body: (some Encodable & Sendable)?, status: Int = 200,
        respond: @escaping @Sendable (Operation.Output) throws -> Reply
    ) async throws -> HeldOrDone<Reply, Components.Schemas.ApprovalRequest> {
        switch try await changeUnlessHeld(
            operation, on: id, body: body,
            respond: {
                StoredResponse(status: status, body: try respond($0))
            })
        {
        case .done(let stored): .done(stored.body)
        case .held(let request): .held(request)
        }
    }

    /// Like `changeUnlessHeld`, for a change whose answer's status depends on its outcome.
    func changeUnlessHeld<Operation: ApprovalGated, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID? = nil, body: (some Encodable & Sendable)?,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Reply>
    ) async throws -> HeldOrDone<StoredResponse<Reply>, Components.Schemas.ApprovalRequest> {
        try await onItsKeysPath {
            let recorded = try await recordedStatus(on: id, body: body)
            // A quoted change's threshold reads its quote (`ApprovalGated.quoted`); a repeat replays
            // its key's record, whatever the change it carries.
            let chosen = recorded == nil && Operation.isQuoted ? try await read(ApprovalQuote(operation)) : operation
            guard takesHeldPath(recorded: recorded, chosen) else {
                return .done(try await change(chosen, on: id, body: body, respond: respond))
            }
            return .held(try await hold(chosen, on: id, body: body))
        }
    }

    /// Whether a change is held: its key's record (`recordedStatus`) was the held answer (202), or,
    /// with no record, the policy holds it now.
    func takesHeldPath(recorded: Int?, _ change: some ApprovalGated) -> Bool {
        recorded == 202 || (recorded == nil && change.needsApproval(policies) != nil)
    }

    /// Runs `choosing`, a change that chooses its path from what it reads (held for approval, or
    /// made): when its twin under the same key committed the other path meanwhile
    /// (`KeyAnsweredOtherPath`), it chooses again, and the key's record decides.
    func onItsKeysPath<Output>(_ choosing: () async throws -> Output) async throws -> Output {
        do { return try await choosing() } catch is KeyAnsweredOtherPath { return try await choosing() }
    }

    /// Records `change`'s approval request instead of performing it (`RequestApproval`, 202, under
    /// the same Idempotency-Key: a repeat answers the same request): the request as answered.
    func hold<Change: ApprovalGated>(_ change: Change, on id: UUID? = nil, body: (some Encodable & Sendable)?)
        async throws -> Components.Schemas.ApprovalRequest
    {
        let now = self.now
        return try await self.change(RequestApproval(change: change), on: id, body: body, status: 202) {
            try $0.api(at: now)
        }
    }

    func listApprovals(_ input: Operations.ListApprovals.Input) async throws -> Operations.ListApprovals.Output {
        let now = self.now
        let (items, next) = try await newestFirst(
            limit: input.query.limit, cursor: input.query.cursor, { ListApprovals(after: $0, limit: $1) }
        ) { try $0.api(at: now) }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getApproval(_ input: Operations.GetApproval.Input) async throws -> Operations.GetApproval.Output {
        let request = try await read(GetApproval(id: try parseID(input.path.approvalId, "approval_id")))
        return .ok(.init(body: .json(try request.api(at: now))))
    }

    /// Approves a held change; a refund's provider is asked once the approval has committed
    /// (`ApprovedRefund.settle`), so the answer shows the approval, and the refund its verdict.
    func approveChange(_ input: Operations.ApproveChange.Input) async throws -> Operations.ApproveChange.Output {
        let decided = try await decide(input.path.approvalId, input.body) {
            DecideApproval(.approve, approvalID: $0, note: $1)
        }
        if decided.action == HeldOrderRefund.action.rawValue {
            // read as the system: the decision is made, whatever the caller's token may read
            let context = try context()
            let request = try await database.readAsSystem(
                GetApproval(id: try parseID(decided.id, "approval_id")), context: context)
            _ = try await ApprovedRefund.settle(request, database: database, context: context, payments: payments)
        }
        return .ok(.init(body: .json(decided)))
    }

    func rejectChange(_ input: Operations.RejectChange.Input) async throws -> Operations.RejectChange.Output {
        let decided = try await decide(input.path.approvalId, input.body) {
            DecideApproval(.reject, approvalID: $0, note: $1)
        }
        return .ok(.init(body: .json(decided)))
    }

    /// A decision on the request at `path` (approving and rejecting take the same optional body).
    private func decide<Decision: AuditedChange>(
        _ path: String, _ body: (some Sendable)?, _ decision: (UUID, String?) -> Decision
    ) async throws -> Components.Schemas.ApprovalRequest where Decision.Output == ApprovalRequest {
        let id = try parseID(path, "approval_id")
        let note: Components.Schemas.ApprovalDecision? = try body.map { try json($0) }
        let now = self.now
        return try await change(decision(id, note?.note), on: id, body: note) { try $0.api(at: now) }
    }
}
