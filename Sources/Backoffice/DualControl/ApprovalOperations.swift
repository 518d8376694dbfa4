import BackofficePlatform
import Foundation
import PostgresNIO

/// Every change `policies/approvals.yaml` may hold, so that a held one can be performed when it is
/// approved. A rule for an action not listed here is refused by the policy tests.
package enum DualControlledChanges {
    package static let all: [any ApprovalGated.Type] = [
        AdjustFitPoints.self, SetEarningRules.self, EraseDeletedAccount.self, CreateOperator.self,
        CreateChallenge.self, RegisterOAuthClient.self, HeldOrderRefund.self,
    ]

    /// The change a request holds, as it was requested.
    /// - Throws: `inconsistent` for an action no listed change has, or JSON it cannot be read from.
    static func change(of request: ApprovalRequest) throws -> any ApprovalGated {
        guard let type = all.first(where: { $0.action.rawValue == request.action }) else {
            throw DomainError.inconsistent("no change of action \(request.action) can be held for approval")
        }
        return try decode(type, request.change)
    }

    private static func decode<Change: ApprovalGated>(_ type: Change.Type, _ json: String) throws -> any ApprovalGated {
        try JSONDecoder().decode(Change.self, from: Data(json.utf8))
    }

    /// Performs `change` in `unit` (the approval's transaction); its audit events.
    static func perform(_ change: some ApprovalGated, in unit: UnitOfWork) async throws -> [AuditRecord] {
        try await change.perform(in: unit).events
    }
}

/// Holds `change` for a second person's approval instead of performing it, under the change's own
/// permission. The change is first checked as it would run (performed, then rolled back to a
/// savepoint), so a request that could not take effect now is refused with the change's own answer
/// and nothing is held; one that would change nothing (rules identical to those in force) is 409
/// `nothing_to_approve`. One audit event (`approvals.request`).
package struct RequestApproval<Change: ApprovalGated>: AuditedChange {
    package let change: Change
    package init(change: Change) { self.change = change }
    package var permission: Action { change.permission }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ApprovalRequest> {
        guard change.needsApproval(unit.policies) != nil else {
            throw DomainError.inconsistent("\(Change.self) needs no approval; it runs at once")
        }
        guard let requester = unit.principal.operatorID else {
            throw DomainError.inconsistent("only an operator requests a change held for approval")
        }
        let change = try await change.resolved(in: unit)
        try await checkAsItWouldRun(change, in: unit)
        let request = ApprovalRequest(
            id: unit.newID(), tenantID: unit.principal.tenantID, action: Change.action.rawValue,
            targetType: change.approvalTarget.type, targetID: change.approvalTarget.id, summary: change.approvalSummary,
            change: String(decoding: try JSONEncoder().encode(change), as: UTF8.self), amount: change.approvalAmount,
            reason: change.approvalReason?.trimmingCharacters(in: .whitespacesAndNewlines), requestedBy: requester,
            createdAt: unit.now,
            expiresAt: unit.now.addingTimeInterval(Double(unit.policies.approvals.expiresAfterHours) * 3600),
            storedStatus: .pending)
        try await unit.execute(
            """
            INSERT INTO approval_requests (tenant_id, id, action, target_type, target_id, summary, change, amount,
                reason, requested_by, created_at, expires_at)
            VALUES (\(request.tenantID), \(request.id), \(request.action), \(request.targetType), \(request.targetID),
                \(request.summary), \(request.change)::jsonb, \(request.amount), \(request.reason),
                \(request.requestedBy), \(request.createdAt), \(request.expiresAt))
            """)
        let event = AuditRecord(
            action: "approvals.request", tenantID: request.tenantID, targetType: "approval_request",
            targetID: request.id.text, reason: request.reason, before: nil, after: try request.snapshot)
        return Audited(request, event: event)
    }

    private func checkAsItWouldRun(_ change: Change, in unit: UnitOfWork) async throws {
        try await unit.execute("SAVEPOINT approval_check")
        let changed: Bool
        do {
            changed = !(try await change.perform(in: unit).events.isEmpty)
        } catch {
            try await unit.execute("ROLLBACK TO SAVEPOINT approval_check")
            throw error
        }
        try await unit.execute("ROLLBACK TO SAVEPOINT approval_check")
        guard changed else {
            throw DomainError.conflict(
                code: "nothing_to_approve", detail: "This would change nothing as things stand: nothing was held.")
        }
    }
}

/// Decides on a held change, once (the request's row is locked: of concurrent decisions one
/// takes effect, the others are 409 `approval_decided`), never past its expiry (409
/// `approval_expired`).
///
/// Approving (`approvals.approve`) performs the change now, in this transaction, with the approver
/// as its actor. Only by a second person: never the requester (403 `own_request`), one of the
/// rule's approver roles (403 `not_an_approver`), holding the change's own permission and scope.
/// Rejecting (`approvals.reject`): one of the rule's approver roles, or the requester withdrawing
/// it; it never takes effect.
package struct DecideApproval: AuditedChange {
    package enum Verdict: Sendable { case approve, reject }
    package let approvalID: UUID
    package let verdict: Verdict
    package let note: String?

    package init(_ verdict: Verdict, approvalID: UUID, note: String?) {
        (self.verdict, self.approvalID, self.note) = (verdict, approvalID, note)
    }

    package static let approve: Action = "approvals.approve"
    package static let reject: Action = "approvals.reject"
    package var permission: Action { verdict == .approve ? Self.approve : Self.reject }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ApprovalRequest> {
        let request = try await ApprovalDecision.pending(approvalID, note: note, in: unit)
        let change = try DualControlledChanges.change(of: request)
        let own = request.requestedBy == unit.principal.operatorID
        guard verdict == .approve else {
            if !own { try ApprovalDecision.requireApprover(change.permission, permission, approving: false, in: unit) }
            return try await ApprovalDecision.record(request, .rejected, note: note, by: permission, in: unit, more: [])
        }
        guard !own else {
            throw DomainError.forbiddenTarget(
                permission, code: "own_request", detail: "A second person approves a change: never the one who asked.")
        }
        try ApprovalDecision.requireApprover(change.permission, permission, approving: true, in: unit)
        try unit.context.permit(change.permission)
        try await ApprovalDecision.requirePerson(permission, in: unit)
        let effects = try await DualControlledChanges.perform(change, in: unit)
        return try await ApprovalDecision.record(
            request, .approved, note: note, by: permission, in: unit, more: effects)
    }
}

/// The steps approving and rejecting share.
enum ApprovalDecision {
    /// The request, locked until the decision commits, when it may still be decided.
    static func pending(_ id: UUID, note: String?, in unit: UnitOfWork) async throws -> ApprovalRequest {
        var validation = Validation()
        validation.text(note, "note", max: 1000, required: false)
        try validation.check()
        let request = try await ApprovalRequest.fetch(id, forUpdate: true, in: unit)
        try request.requireUndecided(at: unit.now)
        return request
    }

    /// Refuses a principal whose role is not among the approvers of `change`'s rule. A request whose
    /// rule the policy has dropped since is approved by no one (it may still be rejected).
    static func requireApprover(_ change: Action, _ decision: Action, approving: Bool, in unit: UnitOfWork) throws {
        guard let rule = unit.policies.approvals.rules[change] else {
            guard approving else { return }
            throw DomainError.forbiddenTarget(
                decision, code: "not_an_approver",
                detail: "policies/approvals.yaml no longer holds \(change.rawValue): reject the request and ask again.")
        }
        guard rule.approvers.contains(unit.principal.role) else {
            throw DomainError.forbiddenTarget(
                decision, code: "not_an_approver",
                detail: "Only \(rule.approvers.sorted().joined(separator: ", ")) decide on \(change.rawValue).")
        }
    }

    /// Refuses an approval by a machine (an OAuth client's or another service operator): a second
    /// person approves.
    static func requirePerson(_ decision: Action, in unit: UnitOfWork) async throws {
        let kind = try await unit.first(
            "SELECT kind FROM operators WHERE id = \(unit.principal.operatorID)", { try $0.decode(String.self) })
        guard kind == "person" else {
            throw DomainError.forbiddenTarget(
                decision, code: "not_an_approver", detail: "A person approves a held change, never a machine client.")
        }
    }

    /// Records the decision, with its audit event before the change's own (`more`).
    static func record(
        _ request: ApprovalRequest, _ status: ApprovalRequest.Status, note: String?, by action: Action,
        in unit: UnitOfWork, more: [AuditRecord]
    ) async throws -> Audited<ApprovalRequest> {
        let note = note?.trimmingCharacters(in: .whitespacesAndNewlines)
        let kept = note?.isEmpty == false ? note : nil
        try await unit.execute(
            """
            UPDATE approval_requests SET status = \(status.rawValue), decided_by = \(unit.principal.operatorID),
                decided_at = \(unit.now), decision_note = \(kept)
            WHERE id = \(request.id)
            """)
        var decided = request
        (decided.storedStatus, decided.decidedBy, decided.decidedAt, decided.decisionNote) = (
            status, unit.principal.operatorID, unit.now, kept
        )
        let event = AuditRecord(
            action: action, tenantID: request.tenantID, targetType: "approval_request", targetID: request.id.text,
            reason: kept, before: try request.snapshot, after: try decided.snapshot)
        return Audited(decided, event: event, more: more)
    }
}

/// One approval request (`approvals.show`).
package typealias GetApproval = GetByID<ApprovalRequest>

/// The approval requests, newest first (`approvals.list`).
package typealias ListApprovals = ListNewestFirst<ApprovalRequest>

/// The requests still pending on one object (the pending banner on its page), oldest first.
package struct PendingApprovals: Query {
    package static let action: Action = "approvals.list"
    package let targetType: String
    package let targetID: String
    package init(targetType: String, targetID: String) { (self.targetType, self.targetID) = (targetType, targetID) }

    package func read(in unit: UnitOfWork) async throws -> [ApprovalRequest] {
        try await unit.all(
            """
            SELECT \(unescaped: ApprovalRequest.columns) FROM approval_requests
            WHERE target_type = \(targetType) AND target_id = \(targetID) AND status = 'pending'
                AND expires_at > \(unit.now)
            ORDER BY created_at, id LIMIT 20
            """)
    }
}
