import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// A customer's FitPoints (backend managers adjust; auditors read): the balance and its
    /// totals, the ledger newest first (50 a page), and an adjustment (points, reason) — the
    /// API's use cases, audited.
    func registerFitPoints(on group: RouterGroup<AppRequestContext>) {
        get("accounts/{id}/fitpoints", on: group) { console in
            try await console.fitPointsPage(try console.routeID(), issues: [])
        }
        post("accounts/{id}/fitpoints", on: group) { console in
            let id = try console.routeID()
            return try await console.submit(
                reading: FormRefusal.reading(conflictFields: ["insufficient_fitpoints": "points"])
            ) {
                guard
                    let points = console.form.text("points").flatMap({
                        Int64($0.replacingOccurrences(of: "+", with: ""))
                    })
                else {
                    throw DomainError.invalid([
                        FieldIssue(
                            field: "points", code: "invalid_number",
                            message: "must be a whole number, such as 250 or -100")
                    ])
                }
                let adjusted = try await console.runUnlessHeld(
                    AdjustFitPoints(customerID: id, points: points, reason: console.form.text("reason")))
                guard case .done((_, let balance)) = adjusted else {
                    return console.redirect(
                        "/console/accounts/\(id.text)/fitpoints",
                        flash: "Held for a second person's approval: nothing changes until another approver accepts it."
                    )
                }
                return console.redirect(
                    "/console/accounts/\(id.text)/fitpoints",
                    flash: "Adjusted: the balance is \(Money.fitPoints(balance.balance)).")
            } refused: { issues in
                try await console.fitPointsPage(id, issues: issues, values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    fileprivate func fitPointsPage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let customer = try await read(GetCustomerAccount(id: id))
        let balance = try await read(GetWalletBalance(customerID: id))
        let before = try Cursor.number(form.text("before"))
        let entries = try await read(WalletLedger(customerID: id, before: before, limit: Console.pageSize + 1))
        let shown = entries.prefix(Console.pageSize)
        var data: [String: Any] = [
            "account": AccountView(customer), "balance": Money.fitPoints(balance.balance),
            "credited": Money.fitPoints(balance.credited),
            "debited": Money.fitPoints(balance.debited), "values": values, "hasEntries": !shown.isEmpty,
            "entries": shown.map { entry -> [String: Any] in
                [
                    "at": ConsoleTime.text(entry.createdAt),
                    "kind": entry.kind.rawValue.replacingOccurrences(of: "_", with: " "),
                    "points": (entry.points > 0 ? "+" : "") + Money.fitPoints(entry.points),
                    "counterparty": entry.counterparty.rawValue.replacingOccurrences(of: "_", with: " "),
                    "reason": entry.reason ?? entry.ruleID ?? "",
                ]
            },
            "canAdjust": may(AdjustFitPoints.action),
        ]
        let pending = try await pendingApprovals(on: "customer", id.text)
        (data["pending"], data["hasPending"]) = (pending, !pending.isEmpty)
        if entries.count > Console.pageSize, let last = shown.last {
            data["next"] = ConsoleLinks.path(
                "/console/accounts/\(id.text)/fitpoints", ["before": Cursor.encode([String(last.id)])])
        }
        FormRefusal(issues).add(to: &data)
        return page(
            "fitpoints", title: "FitPoints of \(customer.email)", status: issues.isEmpty ? .ok : .unprocessableContent,
            data)
    }
}

extension Money {
    /// `4000` → `4,000 FP`.
    static func fitPoints(_ points: Int64) -> String { ChartUnit.fitPoints.text(Int(points)) }
}

extension ChartUnit {
    /// FitPoints, the loyalty points: `1,234 FP`.
    static let fitPoints = ChartUnit.points("FP")
}
