import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Approvals: the requests held for a second person, newest first, each pending one with its
    /// approve and reject forms (a note recorded with the decision). The API's use cases, audited.
    /// A decision holds no request-wide transaction: an approved refund's provider is asked once the
    /// approval has committed (`ApprovedRefund.settle`).
    func registerApprovals(on group: RouterGroup<AppRequestContext>, payments: any PaymentGateway) {
        section("approvals", "Approvals", needs: ListApprovals.action, on: group) { console in
            try await console.approvalsPage(issues: [])
        }
        for (verb, verdict, decided) in [
            (
                "approve", DecideApproval.Verdict.approve,
                "Approved: the change took effect (a refund's verdict is on its order)."
            ),
            ("reject", .reject, "Rejected."),
        ] {
            post("approvals/{id}/\(verb)", on: group, holdsTransaction: false) { console in
                let id = try console.routeID()
                return try await console.submit(reading: Self.decisionRefusal) {
                    let request = try await console.run(
                        DecideApproval(verdict, approvalID: id, note: console.form.text("note")))
                    if verdict == .approve {
                        _ = try await ApprovedRefund.settle(
                            request, database: database, context: console.context, payments: payments)
                    }
                    return console.redirect("/console/approvals", flash: decided)
                } refused: { issues in
                    try await console.approvalsPage(issues: issues, refusedID: id)
                }
            }
        }
    }
}

extension Console {
    /// A refused decision as the queue shows it on its row: the policy's refusals of this person
    /// (their own request, not an approver) in place, like a conflict.
    fileprivate static func decisionRefusal(_ refusal: DomainError) throws -> [FieldIssue] {
        if case .forbiddenTarget(_, let code, let detail) = refusal, ["own_request", "not_an_approver"].contains(code) {
            return [FieldIssue(field: "", code: code, message: detail)]
        }
        return try FormRefusal.issues(refusal)
    }
}

extension ConsoleRequest {
    /// Runs a change the approvals policy may hold: at once, or its approval request recorded.
    func runUnlessHeld<Operation: ApprovalGated>(_ operation: Operation) async throws
        -> HeldOrDone<Operation.Output, ApprovalRequest>
    {
        let operation = Operation.isQuoted ? try await read(ApprovalQuote(operation)) : operation
        guard operation.needsApproval(context.policies) != nil else { return .done(try await run(operation)) }
        return .held(try await run(RequestApproval(change: operation)))
    }

    /// The requests pending on one object, for its page's banner (none for who may not list them).
    func pendingApprovals(on targetType: String, _ targetID: String) async throws -> [[String: Any]] {
        guard may(PendingApprovals.action) else { return [] }
        return try await read(PendingApprovals(targetType: targetType, targetID: targetID)).map {
            ["summary": $0.summary, "expires": ConsoleTime.text($0.expiresAt)] as [String: Any]
        }
    }

    /// The approvals page: a page of requests, newest first; a refused decision shown on its row.
    fileprivate func approvalsPage(issues: [FieldIssue], refusedID: UUID? = nil) async throws -> ConsoleAnswer {
        let (rows, cursor) = try await newestFirstPage(after: form.text("cursor"), limit: Console.pageSize) {
            try await read(ListApprovals(after: $0, limit: $1))
        }
        let now = self.now
        let me = context.principal.operatorID
        var data: [String: Any] = [
            "rows": rows.map { request -> [String: Any] in
                let status = request.status(at: now)
                var row: [String: Any] = [
                    "id": request.id.text, "summary": request.summary, "reason": request.reason ?? "",
                    "status": status.rawValue, "pending": status == .pending, "mine": request.requestedBy == me,
                    "requested": ConsoleTime.text(request.createdAt), "expires": ConsoleTime.text(request.expiresAt),
                ]
                if let (label, path) = Self.where(request) { row["link"] = ["label": label, "path": path] }
                if let note = request.decisionNote { row["note"] = note }
                row["change"] = request.readableChange
                if request.id == refusedID { row["refused"] = issues.map(\.message).joined(separator: " ") }
                return row
            },
            "hasRows": !rows.isEmpty, "canDecide": may(DecideApproval.approve),
        ]
        if let cursor { data["next"] = ConsoleLinks.path("/console/approvals", ["cursor": cursor]) }
        return page("approvals", title: "Approvals", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// The page a request's change is about (where its pending banner shows), by its target.
    fileprivate static func `where`(_ request: ApprovalRequest) -> (label: String, path: String)? {
        switch request.targetType {
        case "customer" where request.action == EraseDeletedAccount.action.rawValue:
            ("The account", "/console/accounts/\(request.targetID)")
        case "customer": ("Its FitPoints", "/console/accounts/\(request.targetID)/fitpoints")
        case "people": ("People", "/console/people")
        case "challenges": ("Challenges", "/console/challenges")
        case "order": ("The order", "/console/orders/\(request.targetID)")
        case "fitpoints_rules": ("Earning rules", "/console/earning-rules")
        default: nil
        }
    }
}
